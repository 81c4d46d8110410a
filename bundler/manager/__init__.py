"""Controllers on the management cluster: Cluster, Bundle and status roll-up.

The rooms, and what may import what (import-linter holds it):
- `controllers`: the bundle, cluster, bootstrap and status controllers, and what only they use.
- `memo`: what the manager computed and keeps in memory between passes (rows, outcomes, tallies,
  continuations, its own writes awaiting their watch events).
- `observed`: what the manager sees of the API (informers and their indexes per workspace, agent
  liveness) and which work each change of it causes.
- `copies`: the Secrets copied into cluster namespaces for the agents (repository credentials,
  management values).
Beside them, what they all share: `context` (the store, clock and the rooms above), `options`,
`work` (the controllers by name), `writes`, `owned_status`, `events`, `metrics`; and `app`, which
wires everything onto one host. Only `app` imports the controllers; version, image and management
values resolution is bundler.resolution, outside the manager.
"""
