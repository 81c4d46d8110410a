"""Pydantic models of the bundler.dev/v1alpha1 API and the CRD generator."""
