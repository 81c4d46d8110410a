"""The store protocol controllers use, and its in-memory backend with Kubernetes semantics."""
