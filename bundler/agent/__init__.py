"""The per-cluster agent: BundleDeployments to Flux objects, status back."""
