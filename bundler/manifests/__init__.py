"""The Kubernetes objects a BundleDeployment becomes: its chart rendered by Helm's own engine."""
