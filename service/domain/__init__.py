"""The service's domain layer: what a request or a background run does to the tables, below the HTTP layer.

Routes (`service/routes/`) parse, authorise and call these functions; background runs (`service/runs/`) call
them too. Nothing here imports a route or the run executor.
"""
