"""Controllers on the management cluster: Cluster, Bundle and status roll-up."""
