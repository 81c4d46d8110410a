"""Child processes under operating-system bounds: what chart renders (bundler.manifests.sandbox) and
template renders (bundler.templating_pool) share.

:mod:`~bundler.bounded.frames` is how a parent and its child talk (length-prefixed JSON frames
over pipes, read within a deadline and checked before use); :mod:`~bundler.bounded.child` starts
a child that cannot outlive its parent and whose environment finds bundler as the parent did.
"""
