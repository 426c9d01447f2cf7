#!/bin/sh
# matrix.sh - the terminal matrix, quick subset (3 sizes x 2 TERMs x 2 locales,
# TERM=dumb, a resize storm, a hangup) in `make test`: tests/matrix/run.sh.
# The full matrix: `make check-full`.
exec sh tests/matrix/run.sh quick
