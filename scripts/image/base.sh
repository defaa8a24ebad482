#!/bin/sh
# Makes the Debian 12 base images the image build and the image test use,
# when no registry can give them: a `debootstrap --variant=minbase bookworm`
# root, trimmed like Debian's -slim images (no docs, man pages or locales),
# imported into podman's local storage.
#   base.sh BUILD_DIR debian   -> docker.io/library/debian:bookworm-slim
#                                 (the name the Dockerfile's FROM uses)
#   base.sh BUILD_DIR jre      -> localhost/fnworker-test-jre:bookworm (the
#                                 TaskManager stand-in of the image test: the
#                                 debian base plus a headless JRE, nothing else)
# Each image carries a label with the hash of its inputs (this script, the
# mirror, the package list); it is made again only when that hash changes.
# An image of that name without the label (a real one pulled from a registry)
# is left alone and used as it is. The root tarball is cached in
# BUILD_DIR/image/. The Debian mirror is the one apt uses on this machine
# (/etc/apt/sources.list*), or FNW_DEBIAN_MIRROR.
set -eu
build=$1
what=$2
here=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
dir="$build/image"
mkdir -p "$dir"

mirror=${FNW_DEBIAN_MIRROR:-}
if [ -z "$mirror" ]; then
  # deb822 (URIs: url) or one-line (deb url suite ...) sources; the first
  # one that is not the security archive
  mirror=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.sources \
             /etc/apt/sources.list.d/*.list 2>/dev/null |
           sed -n -e 's/^URIs:[[:space:]]*\([^[:space:]]*\).*/\1/p' \
                  -e 's/^deb[[:space:]]\{1,\}\(\[[^]]*\][[:space:]]*\)\{0,1\}\([^[:space:]]*\).*/\2/p' |
           grep -v security | head -n 1)
  mirror=${mirror:-http://deb.debian.org/debian}
fi

label=fnworker.base.inputs
inputs_hash() { { cat "$here/base.sh"; echo "$mirror"; echo "$*"; } | sha256sum | cut -c1-16; }
current() {   # the image's input hash, "none" without the label, "" when absent
  podman image exists "$1" || return 0
  h=$(podman image inspect --format "{{index .Labels \"$label\"}}" "$1" 2>/dev/null || true)
  case "$h" in ""|"<no value>") echo none ;; *) echo "$h" ;; esac
}

case "$what" in
debian)
  name=docker.io/library/debian:bookworm-slim
  hash=$(inputs_hash debian)
  have=$(current "$name")
  if [ "$have" = none ] || [ "$have" = "$hash" ]; then exit 0; fi
  tar="$dir/bookworm-minbase-$hash.tar"
  if [ ! -s "$tar" ]; then
    command -v debootstrap >/dev/null ||
      { echo "base.sh: debootstrap is not installed (apt-get install debootstrap)" >&2; exit 1; }
    root="$dir/rootfs"
    rm -rf "$root"
    echo "debootstrap --variant=minbase bookworm from $mirror (a few minutes, once)"
    debootstrap --variant=minbase bookworm "$root" "$mirror" >"$dir/debootstrap.log" 2>&1 ||
      { tail -n 20 "$dir/debootstrap.log" >&2; exit 1; }
    # -slim: dpkg leaves out docs, man pages and locales from now on
    cat >"$root/etc/dpkg/dpkg.cfg.d/slim" <<'CFG'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
CFG
    find "$root/usr/share/doc" -mindepth 2 ! -name copyright ! -type d -delete
    # (the man directories stay: some packages' scripts link into them)
    find "$root/usr/share/man" "$root/usr/share/info" ! -type d -delete
    rm -rf "$root/var/cache/apt"/*.bin "$root/var/cache/apt/archives"/*.deb \
           "$root/var/lib/apt/lists"/*_* "$root/var/log"/*.log
    find "$root/usr/share/locale" -mindepth 1 -maxdepth 1 ! -name locale.alias -exec rm -rf {} +
    tar -C "$root" --numeric-owner -cf "$tar.tmp" . && mv "$tar.tmp" "$tar"
    rm -rf "$root"
    find "$dir" -maxdepth 1 -name 'bookworm-minbase-*.tar' ! -name "$(basename "$tar")" -delete
  fi
  podman import -q --change "LABEL $label=$hash" --change 'CMD ["/bin/bash"]' \
    "$tar" "$name" >/dev/null
  echo "base image $name imported from $tar"
  ;;
jre)
  name=localhost/fnworker-test-jre:bookworm
  "$0" "$build" debian
  hash=$(inputs_hash jre "$(podman image inspect --format '{{.Id}}' docker.io/library/debian:bookworm-slim)")
  [ "$(current "$name")" = "$hash" ] && exit 0
  echo "building $name (debian + default-jre-headless, once)"
  printf '%s\n' 'FROM docker.io/library/debian:bookworm-slim' \
    'RUN apt-get update && apt-get install -y --no-install-recommends default-jre-headless \' \
    '    && rm -rf /var/lib/apt/lists/*' >"$dir/jre.Containerfile"
  podman build --pull=never --network=host --label "$label=$hash" -t "$name" \
    -f "$dir/jre.Containerfile" "$dir" >"$dir/jre-build.log" 2>&1 ||
    { tail -n 20 "$dir/jre-build.log" >&2; exit 1; }
  ;;
*) echo "usage: base.sh BUILD_DIR debian|jre" >&2; exit 2 ;;
esac
