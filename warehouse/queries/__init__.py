"""Read-only questions over the warehouse's named views, as typed Python functions."""
