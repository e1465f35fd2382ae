#!/usr/bin/env bash
# Gradescope runs this once when it builds the autograder's image (Ubuntu, as root; choose an
# image with the CUDA toolkit, and a GPU machine, in the assignment's settings). It installs
# what the grader needs and builds the harness once, so that a grading only compiles the
# student's files.
set -euo pipefail
case "${1:-}" in
  -h|--help) echo "usage: setup.sh   (Gradescope runs it once, as root, with no arguments)"
             sed -n '2,5p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac
cd "$(dirname "$0")"
apt-get update
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3 git
scripts/install-deps
LABS=""
# shellcheck disable=SC1091
[ -f gradescope.conf ] && . ./gradescope.conf
# A first grading of the starters configures and builds build/grade (the student's files are
# rebuilt at each grading); exit 3 (no GPU while the image is built) is expected.
# shellcheck disable=SC2086
python3 -m grader grade -q --build-dir build/grade -o /tmp/setup-grade.json $LABS || true
