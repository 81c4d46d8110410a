"""Cluster API import: CAPI Clusters become bundler Clusters."""
