"""Helm charts in OCI registries: packaging, push, pull, tag listing."""
