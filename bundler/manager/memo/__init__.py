"""What the manager computed and keeps in memory between passes, so a change costs what it touches.

Planned rows per (bundle, cluster), each Bundle's last outcome and status tally, the placements
the roll-ups read, what a capped pass left to continue, the clusters whose namespace is being set
up, and the manager's own writes awaiting their watch events. Nothing here is read from the API
first: a restart starts it empty and the first passes fill it. Controllers read and update it;
it never imports them.
"""
