"""What the manager observes of the API, and which work each change of it causes.

Per workspace, the informers and the parsed indexes beside them (scope, indexes), whether each
Cluster's agent is offline (liveness), and the routes from informer events to exactly the
controller keys they can affect (routing). Controllers read it; it never imports them.
"""
