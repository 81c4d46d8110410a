"""`bundler rollout approve`: let a rollout past the partitions that wait for an approval.

The approval is the Bundle's annotation bundler.dev/approve-rollout, carrying the generation it
approves (bundler.core.rollout_gates), so it never promotes a later spec. The annotation is
patched with the resourceVersion it was decided on: when the Bundle changed in between, the
command reads it again, and gives up (exit 1) if its generation moved, since the spec it would
approve is not the one it read. Every refusal (no such Bundle, no approval in its strategy, a
partition that waits for none, another generation than --generation) exits 1, saying why.
"""

from __future__ import annotations

import argparse
from typing import Any

from pydantic import ValidationError

from bundler.api.bundle import Bundle, RolloutStatus
from bundler.api.resources import BUNDLE
from bundler.commands.flag_types import add_workspace_argument
from bundler.core.approvals import APPROVE, approval_annotation
from bundler.core.validation import bundle_of
from bundler.errors import BundlerError, InvalidInputError
from bundler.kube.store import load_store
from bundler.store.errors import Conflict, NotFound
from bundler.store.protocol import Obj, Store

EXIT_OK = 0
# Writes tried before giving up on a Bundle whose status keeps changing under the command.
ATTEMPTS = 5


def register(sub: Any) -> None:
    group = sub.add_parser("rollout", help="steer the rollout of a Bundle")
    commands = group.add_subparsers(dest="rollout_command", required=True, metavar="COMMAND")
    command = commands.add_parser(
        "approve",
        help="approve the partitions of a Bundle's rollout that wait for an approval",
        description="Approve the current generation of BUNDLE for one partition (--partition) "
        "or for every partition that waits for approval (rolloutStrategy.approval). The "
        "approval is the annotation bundler.dev/approve-rollout with that generation: a later "
        "change of the Bundle waits for a new approval. Exit 1 when there is nothing to "
        "approve as asked.",
    )
    command.add_argument("bundle", metavar="BUNDLE", help="the Bundle: NAME or WORKSPACE/NAME")
    command.add_argument(
        "--partition", metavar="NAME", help="approve this partition only (default: every one)"
    )
    command.add_argument(
        "--generation",
        type=int,
        metavar="N",
        help="approve only if the Bundle is at this metadata.generation (the spec reviewed)",
    )
    add_workspace_argument(command, "the workspace, unless BUNDLE names it")
    command.add_argument(
        "--kubeconfig",
        metavar="PATH",
        help="kubeconfig of the management cluster (default: $KUBECONFIG, else in-cluster)",
    )
    command.add_argument("--context", metavar="NAME", help="context of the kubeconfig to use")
    command.set_defaults(run=run_approve)


def run_approve(args: argparse.Namespace) -> int:
    workspace, _, name = args.bundle.rpartition("/")
    workspace = workspace or args.namespace
    with load_store(args.kubeconfig, args.context) as store:
        generation = approve(store, workspace, name, args.partition, args.generation)
    what = "every partition" if args.partition is None else f"partition {args.partition}"
    print(f"approved {what} of Bundle {workspace}/{name} at generation {generation}")
    return EXIT_OK


def approve(
    store: Store, workspace: str, name: str, partition: str | None, wanted: int | None
) -> int:
    """Write the approval; the generation approved."""
    first: int | None = None
    for _ in range(ATTEMPTS):
        observed = _read(store, workspace, name)
        bundle = _parse(observed)
        generation = bundle.metadata.generation or 0
        if wanted is not None and generation != wanted:
            raise BundlerError(
                f"is at generation {generation}, not {wanted}: review it and approve again",
                obj=f"Bundle {workspace}/{name}",
            )
        if first is not None and generation != first:
            raise BundlerError(
                f"changed from generation {first} to {generation} while it was being approved: "
                "review it and approve again",
                obj=f"Bundle {workspace}/{name}",
            )
        first = generation
        value = approval_annotation(bundle, partition, _shown_partitions(observed))
        patch = {
            "metadata": {
                "annotations": {APPROVE: value},
                "resourceVersion": observed["metadata"]["resourceVersion"],
            }
        }
        try:
            store.patch(BUNDLE, name, patch, workspace)
        except Conflict:
            continue
        return generation
    raise BundlerError(
        f"kept changing while it was being approved ({ATTEMPTS} tries)",
        obj=f"Bundle {workspace}/{name}",
    )


def _read(store: Store, workspace: str, name: str) -> Obj:
    try:
        return store.get(BUNDLE, name, workspace)
    except NotFound:
        raise BundlerError("not found", obj=f"Bundle {workspace}/{name}") from None


def _parse(observed: Obj) -> Bundle:
    try:
        return bundle_of(observed)
    except InvalidInputError as err:
        raise BundlerError(
            f"cannot be read ({err.field}: {err.message}): fix it before approving its rollout",
            obj=err.obj,
        ) from None


def _shown_partitions(observed: Obj) -> list[str]:
    """The partitions the Bundle's status names (automatic ones included)."""
    shown = (observed.get("status") or {}).get("rollout")
    try:
        rollout = RolloutStatus.model_validate(shown) if isinstance(shown, dict) else None
    except ValidationError:
        return []
    return [p.name for p in rollout.partitions] if rollout is not None else []
