"""Work queue, informer caches, reconcile loop, leader election and clock: no domain knowledge."""
