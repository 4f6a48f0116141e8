#!/usr/bin/env bash
# Build the runtime base image from Debian's packages (no image registry needed) and import it.
#
# The image stands in for python:3.11-slim-bookworm in docker/Dockerfile (build argument
# PYTHON_IMAGE): Debian 12 (bookworm) with Python 3.11, OpenJDK 17 JRE (headless), tini and procps,
# made by mmdebstrap from deb.debian.org and imported with `podman import`. Python is a virtual
# environment at /usr/local (`python3.11 -m venv /usr/local`), so `python` and `pip` are
# /usr/local/bin/python and pip and packages go to /usr/local/lib/python3.11/site-packages, the
# same paths as in python:3.11-slim-bookworm; the Dockerfile needs no second variant.
#
# Usage: docker/base.sh            prints the image name (builds it unless it exists)
#        docker/base.sh --rebuild  builds it again
#
# The image name carries a hash of this script without its comment lines (the package list, the
# pinned versions, the mmdebstrap and import commands), so a change to any of those builds a new
# base, and an unchanged recipe (comments aside) reuses the image: a warm run costs one
# `podman image exists`.
#
# Environment: FILECOMMIT_DEBIAN_MIRROR (default http://deb.debian.org/debian),
# FILECOMMIT_DEBIAN_SECURITY (default http://deb.debian.org/debian-security), PODMAN (default podman),
# FILECOMMIT_BASE_UNPINNED=1 installs the newest versions instead of the pins (when the mirror has
# dropped a pinned version after a point release; update the pins then).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PODMAN="${PODMAN:-podman}"
MIRROR="${FILECOMMIT_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
SECURITY="${FILECOMMIT_DEBIAN_SECURITY:-http://deb.debian.org/debian-security}"

# Pinned to the versions of Debian 12.12 + bookworm-security (2026-11). Debian keeps only the
# newest version of a package in a suite, so a pin breaks when a security update replaces it:
# FILECOMMIT_BASE_UNPINNED=1, then update the pins.
PACKAGES=(
  python3.11=3.11.2-6+deb12u9
  python3.11-venv=3.11.2-6+deb12u9
  openjdk-17-jre-headless=17.0.21.1+2-1~deb12u1
  tini=0.19.0-1+b3
  procps=2:4.0.2-3
  passwd=1:4.13+dfsg1-1+deb12u2
  ca-certificates=20250419~deb12u2
)
if [[ -n "${FILECOMMIT_BASE_UNPINNED:-}" ]]; then
  PACKAGES=("${PACKAGES[@]%%=*}")
fi

TAG="localhost/filecommit-base:bookworm-$(grep -v '^[[:space:]]*#' "$HERE/base.sh" | sha256sum | cut -c1-12)${FILECOMMIT_BASE_UNPINNED:+-unpinned}"

if [[ "${1:-}" != "--rebuild" ]] && "$PODMAN" image exists "$TAG"; then
  echo "$TAG"
  exit 0
fi

for tool in mmdebstrap "$PODMAN"; do
  command -v "$tool" >/dev/null || { echo "docker/base.sh: $tool not found (apt-get install mmdebstrap podman)" >&2; exit 2; }
done

work="$(mktemp -d "${TMPDIR:-/tmp}/filecommit-base.XXXXXX")"
trap 'rm -rf "$work"' EXIT
t0=$SECONDS
include="$(IFS=,; echo "${PACKAGES[*]}")"
# --variant=apt: Essential packages + apt, then exactly the listed packages (and their
# dependencies), no recommends. Documentation and locales are left out (dpkg path-exclude).
# The JRE's postinst registers man pages with update-alternatives: man1 must exist.
# force-unsafe-io: dpkg does not fsync every unpacked file while the tree is made (a tarball in the
# end); removed from the image's dpkg configuration afterwards.
mmdebstrap --quiet --variant=apt --include="$include" \
  --dpkgopt=force-unsafe-io \
  --dpkgopt='path-exclude=/usr/share/doc/*' \
  --dpkgopt='path-include=/usr/share/doc/*/copyright' \
  --dpkgopt='path-exclude=/usr/share/man/*' \
  --dpkgopt='path-exclude=/usr/share/locale/*' \
  --setup-hook='mkdir -p "$1/usr/share/man/man1"' \
  --customize-hook='chroot "$1" python3.11 -m venv /usr/local' \
  --customize-hook='chroot "$1" python --version' \
  --customize-hook='chroot "$1" java -version' \
  --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin' \
  --customize-hook='sed -i "/^force-unsafe-io\$/d" "$1/etc/dpkg/dpkg.cfg.d/99mmdebstrap"' \
  bookworm "$work/rootfs.tar" \
  "deb $MIRROR bookworm main" \
  "deb $MIRROR bookworm-updates main" \
  "deb $SECURITY bookworm-security main" >&2
"$PODMAN" import \
  --change 'ENV PATH=/usr/local/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV LANG=C.UTF-8' \
  --change 'CMD ["python"]' \
  --message "filecommit runtime base: mmdebstrap bookworm ${PACKAGES[*]}" \
  "$work/rootfs.tar" "$TAG" >/dev/null
echo "docker/base.sh: built $TAG in $((SECONDS - t0)) s ($(du -m "$work/rootfs.tar" | cut -f1) MiB)" >&2
echo "$TAG"
