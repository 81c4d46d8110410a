"""What a Bundle names made concrete before planning: chart versions, images and management values.

The manager resolves through these modules with its caches and counters; the offline commands
(`render`, `explain`, `diff`, `sim`, `dev`, ...) use them without the manager. Resolution reads
registries (bundler.oci) and the workspace's objects through a Store, never the manager's state.
"""
