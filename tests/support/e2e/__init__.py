"""The e2e harness: real kube-apiservers, etcd, kube-controller-manager and Flux's controllers,
built by `make e2e-tools`, started on loopback for `make e2e`; bundler runs beside them as users
run it (its own processes, with the RBAC its Helm charts render). The e2e tests' part of
tests.support: test modules import from here, never from each other."""
