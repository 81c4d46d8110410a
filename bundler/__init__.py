"""bundler: deploy Helm charts to fleets of Kubernetes clusters (Bundle -> BundleDeployment)."""

__version__ = "0.1.0"
