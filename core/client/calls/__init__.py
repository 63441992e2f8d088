"""The client's calls, one module per resource; `core.client.Client` has them all."""
