"""The manager's controllers, and what only they use.

The bundle controller (Bundles in, BundleDeployments out, with its continued passes, rollout gates
and rollout memory), the cluster controller (namespace and agent identity), the bootstrap
controller (Flux and the agent on a new cluster, a few at a time) and the status controllers (the
roll-ups of Bundles, Clusters and ClusterGroups, with what a Bundle says of its images). Each
observes through bundler.manager.observed, decides with a core function, writes once
(bundler.manager.writes) and records what it decided in bundler.manager.memo.
"""
