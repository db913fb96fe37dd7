#!/usr/bin/env bash
# Gradescope runs this once, as root on its Ubuntu image, from the unzipped
# bundle (/autograder/source): system packages, a virtualenv with the
# grader, MNIST, and the reference's expected answers computed up front so
# that no submission pays for them.
set -euo pipefail
SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export DEBIAN_FRONTEND=noninteractive
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1

# Ubuntu's own python3 (dist-packages, a patched site.py: the sandbox
# decides its workers' sys.path itself), its venv, tkinter (Debian and
# Ubuntu ship it apart; student code may import it) and bubblewrap; apt runs
# only for what is missing.
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "ok installed"; }
need=()
for package in python3 python3-venv python3-pip python3-tk bubblewrap; do
    installed "$package" || need+=("$package")
done
if [ ${#need[@]} -gt 0 ]; then
    apt-get update -q
    apt-get install -y -q --no-install-recommends "${need[@]}"
fi

python3 -m venv "$SRC/.venv"
"$SRC/.venv/bin/pip" install --quiet --upgrade pip
# Editable: the grader finds reference/, handout/ and data/ beside its package.
"$SRC/.venv/bin/pip" install --quiet -e "$SRC"

cd "$SRC"
"$SRC/.venv/bin/python" reference/tools/fetch_mnist.py data
"$SRC/.venv/bin/python" -c "from grader.grading.run import expected; from grader.grading.run.config import RunConfig; \
print('expected answers in', expected.expected_dir(RunConfig()))"
# The known bugs' values too (likely causes): each submission's container
# would otherwise run them again on its first failed case.
"$SRC/.venv/bin/python" -c "from grader.grading.explain.causes import store; from grader.grading.run.config import RunConfig; \
print('known bugs in', store.causes_dir(RunConfig()))"

# Student code runs as a sandbox uid of its own. Where neither namespaces
# nor Landlock can hide this folder (root without CAP_SYS_ADMIN on an older
# kernel), its modes must: only root may enter it (the workers need nothing
# in it: they run a copied interpreter from /var/tmp).
chmod 0750 "$SRC"
