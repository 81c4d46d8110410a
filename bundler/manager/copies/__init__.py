"""Secrets the manager copies into cluster namespaces for the agents, and how long they live.

One machinery (secret_copies) for two kinds of copies: repository credentials named by
`helm.secretRef` (credentials) and management values named by `valuesFrom` entries with `source:
Management` (management_values). The bundle controller makes the copies before it writes a
BundleDeployment naming them; they only write, never plan.
"""
