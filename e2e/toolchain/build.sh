#!/usr/bin/env bash
# make e2e-tools: builds the real components `make e2e` runs (kube-apiserver, kube-controller-manager,
# kubectl, etcd, Flux's source-controller, helm-controller and kustomize-controller) from their
# published Go modules, pinned by the go.mod/go.sum beside this script, into a cache keyed by
# component and version. What is there is skipped; the Go build cache makes a rebuild after a
# version bump cheap.
#
# `$0 fleet` (make bench-fleet) builds Rancher Fleet's controller too, for the side-by-side benchmark.
#
# Output: the directory holding the binaries, printed last (also `$0 --print-dir`).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
cache=${BUNDLER_E2E_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/bundler-e2e}
bin="$cache/bin"

if [ "${1:-}" = "--print-dir" ]; then echo "$bin"; exit 0; fi
if ! command -v go >/dev/null 2>&1; then
  echo "make e2e-tools needs Go >= 1.26 on PATH (https://go.dev/doc/install); the components are built from the Go module proxy" >&2
  exit 2
fi

# The version of a module required by one of our tools modules, as go.mod pins it.
pinned() { (cd "$here/$1" && go list -m -f '{{.Version}}' "$2"); }

# build DIR MODULE BINARY PACKAGE [go build flags...]: one binary into the cache, unless there already.
build() {
  local dir=$1 module=$2 name=$3 pkg=$4; shift 4
  local version; version=$(pinned "$dir" "$module")
  local out="$cache/$dir-$version/$name"
  if [ -x "$out" ]; then
    echo "e2e-tools: $name $version (cached)"
  else
    echo "e2e-tools: building $name $version"
    local started=$SECONDS
    (cd "$here/$dir" && CGO_ENABLED=0 go build -trimpath -buildvcs=false -o "$out.partial" "$@" "$pkg")
    mv "$out.partial" "$out"
    echo "e2e-tools: $name $version built in $((SECONDS - started)) s"
  fi
  mkdir -p "$bin"
  ln -sfn "$out" "$bin/$name"
}

mkdir -p "$cache"

k8s=$(pinned kubernetes k8s.io/kubernetes)
k8s_minor=${k8s#v1.}; k8s_minor=${k8s_minor%%.*}
# Without these, the binaries report v0.0.0-master and Helm's kubeVersion checks in charts misfire.
k8s_ldflags="-s -w"
for pkgpath in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  k8s_ldflags+=" -X $pkgpath.gitVersion=$k8s -X $pkgpath.gitMajor=1 -X $pkgpath.gitMinor=$k8s_minor"
  k8s_ldflags+=" -X $pkgpath.gitTreeState=clean -X $pkgpath.buildDate=1970-01-01T00:00:00Z"
done
for cmd in kube-apiserver kube-controller-manager kubectl; do
  build kubernetes k8s.io/kubernetes "$cmd" "k8s.io/kubernetes/cmd/$cmd" -tags selinux,notest -ldflags "$k8s_ldflags"
done
build etcd go.etcd.io/etcd/server/v3 etcd go.etcd.io/etcd/server/v3 -ldflags "-s -w"
build source-controller github.com/fluxcd/source-controller source-controller github.com/fluxcd/source-controller -ldflags "-s -w"
build helm-controller github.com/fluxcd/helm-controller helm-controller github.com/fluxcd/helm-controller -ldflags "-s -w"
build kustomize-controller github.com/fluxcd/kustomize-controller kustomize-controller \
  github.com/fluxcd/kustomize-controller -ldflags "-s -w"

# Flux's CRDs (and Fleet's) come from the same module zips the controllers were built from.
for pair in source-controller:github.com/fluxcd/source-controller helm-controller:github.com/fluxcd/helm-controller \
  kustomize-controller:github.com/fluxcd/kustomize-controller; do
  dir=${pair%%:*}; module=${pair#*:}
  src=$(cd "$here/$dir" && go list -m -f '{{.Dir}}' "$module")
  mkdir -p "$cache/crds/$dir"
  cp -f "$src"/config/crd/bases/*.yaml "$cache/crds/$dir/"
  chmod u+w "$cache/crds/$dir/"*.yaml
done

if [ "${1:-}" = "fleet" ]; then
  build fleet github.com/rancher/fleet fleetcontroller github.com/rancher/fleet/cmd/fleetcontroller \
    -ldflags "-s -w"
  src=$(cd "$here/fleet" && go list -m -f '{{.Dir}}' github.com/rancher/fleet)
  mkdir -p "$cache/fleet"
  cp -f "$src/charts/fleet-crd/templates/crds.yaml" "$cache/fleet/crds.yaml"
  rm -rf "$cache/fleet/chart"
  cp -rf "$src/charts/fleet" "$cache/fleet/chart"
  chmod -R u+w "$cache/fleet"
fi
echo "$bin"
