"""`gpusleuth serve`: a bundle (or any source) as a read-only Kubernetes API on 127.0.0.1.

Support engineers browse a customer's snapshot with kubectl; tests use it as the API server double for the
live path, with injected faults. Nothing here imports a Kubernetes client library.
"""
