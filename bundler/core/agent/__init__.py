"""What an agent is and does, as pure data: its identity on the management cluster (identity), the
kubeconfig and Helm values it runs with (kubeconfig, helm_values), and its decision per
BundleDeployment and the status it reports (plan)."""
