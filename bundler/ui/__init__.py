"""`bundler ui`: a fleet dashboard in the browser, served on loopback, acting with the user's own
credentials.

- fleet_model: what the watches saw, kept as the Fleet page's matrix (a state per Bundle and
  Cluster) and told as changes;
- details: the Bundle, deployment and Cluster pages' answers, from that model and bundler.core;
- watches: one informer per kind over the user's store, feeding the model;
- events: the changes fanned out to every browser as server-sent events;
- actions: pause, resume, resume a halted rollout, allow a held deletion, as merge patches;
- security: loopback addresses, Host and Origin checks, the CSRF token;
- server: the HTTP server (standard library) and its routes; static/: the page itself.
"""
