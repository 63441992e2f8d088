"""Request and response bodies, the source of the OpenAPI document: one module per resource, named as its
route in `service/routes/` (`models`, `traits`, `samples`, …), and `common` (the strict request base, the
text rule, the patterns the document states). Import a body from its module; nothing is re-exported here.
"""
