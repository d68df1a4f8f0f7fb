#!/usr/bin/env bash
# Build a .deb of Engram from the PyInstaller bundle with dpkg-deb (issue 20 item 2):
#   /opt/engram/                 the bundle (the program, its LICENSE and third-party notices)
#   /usr/bin/engram              a link to /opt/engram/engram
#   /usr/share/applications/     the desktop entry (and MimeType=, so a file manager opens a
#                                store with it)
#   /usr/share/icons/hicolor/    the icon: the SVG in scalable/apps and every PNG size
#   /usr/share/mime/packages/    the .engram MIME type
#   /usr/share/metainfo/         the AppStream metainfo
#   /usr/share/doc/engram/       copyright (Engram's licence and every third-party notice)
#                                and changelog.gz
#   /usr/share/man/man1/engram.1.gz, /usr/share/bash-completion/completions/engram and
#   /usr/share/zsh/vendor-completions/_engram   the manual page and shell completion
#                                (generated from the parsers by packaging/cli_files.py)
# The desktop's own triggers (desktop-file-utils, shared-mime-info, the icon cache) pick the
# files up at install and removal; the package has no maintainer scripts.
#
#   packaging/deb.sh                   build the bundle (packaging/bundle.sh), then the .deb
#   ENGRAM_DEB_BUNDLE=DIR              package a bundle already built in DIR instead
#   ENGRAM_DEB_OUT=DIR                 where the .deb goes (default dist/)
# Prints the path of the .deb it wrote on its last line.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${ENGRAM_DEB_OUT:-$root/dist}"
bundle="${ENGRAM_DEB_BUNDLE:-}"
if [ -z "$bundle" ]; then
  bash "$root/packaging/bundle.sh" >&2
  bundle="${ENGRAM_BUNDLE_DIST:-$root/dist}/engram"
fi
[ -x "$bundle/engram" ] || { echo "deb: no bundle in $bundle (packaging/bundle.sh builds it)" >&2; exit 1; }
notices="$bundle/THIRD_PARTY_NOTICES.txt"
[ -f "$notices" ] && [ -f "$bundle/LICENSE" ] \
  || { echo "deb: the bundle in $bundle lacks LICENSE or THIRD_PARTY_NOTICES.txt" >&2; exit 1; }

app_id="io.github.engram_inspector.Engram"
version="$("$bundle/engram" --version)"  # "engram VERSION"
version="${version#engram }"
arch="$(dpkg --print-architecture)"
maintainer="${ENGRAM_DEB_MAINTAINER:-Engram Inspector maintainers <engram-inspector@users.noreply.github.com>}"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
pkg="$stage/engram"
share="$pkg/usr/share"

# The program, as the bundle is.
mkdir -p "$pkg/opt" "$pkg/usr/bin" "$pkg/DEBIAN"
cp -a "$bundle" "$pkg/opt/engram"
ln -s /opt/engram/engram "$pkg/usr/bin/engram"

# Shared libraries are not programs; and some of Python's own extension modules still say
# where they were built (a RUNPATH into the build machine's Python), which the bundle must
# not look in: the bootloader points the loader at _internal itself.
find "$pkg/opt/engram" -type f \( -name '*.so' -o -name '*.so.*' \) -exec chmod 644 {} +
command -v patchelf >/dev/null \
  || { echo "deb: needs patchelf (apt-get install patchelf)" >&2; exit 1; }
while IFS= read -r -d '' library; do
  runpath="$(patchelf --print-rpath "$library" 2>/dev/null || true)"
  if [ -n "$runpath" ] && [[ "$runpath" != *'$ORIGIN'* ]]; then
    patchelf --remove-rpath "$library"
  fi
done < <(find "$pkg/opt/engram" -type f -name '*.so*' -print0)

# The desktop files, from the package's own copies (the same the wheel installs per user).
data="$root/app/engram/data"
install -Dm644 "$data/desktop/$app_id.desktop" "$share/applications/$app_id.desktop"
install -Dm644 "$data/desktop/$app_id.metainfo.xml" "$share/metainfo/$app_id.metainfo.xml"
install -Dm644 "$data/desktop/$app_id.mime.xml" "$share/mime/packages/$app_id.xml"
install -Dm644 "$data/icons/engram.svg" "$share/icons/hicolor/scalable/apps/$app_id.svg"
for png in "$data"/icons/hicolor/*/apps/"$app_id.png"; do
  size="$(basename "$(dirname "$(dirname "$png")")")"
  install -Dm644 "$png" "$share/icons/hicolor/$size/apps/$app_id.png"
done

# The manual page (compressed, as Debian keeps them) and shell completion, as committed.
install -Dm644 "$root/packaging/completions/engram" "$share/bash-completion/completions/engram"
install -Dm644 "$root/packaging/completions/_engram" "$share/zsh/vendor-completions/_engram"
mkdir -p "$share/man/man1"
gzip -9n <"$root/packaging/man/engram.1" >"$share/man/man1/engram.1.gz"
chmod 644 "$share/man/man1/engram.1.gz"

# The licences. Engram's is the Apache License 2.0, whose text Debian keeps in
# common-licenses; the copyright file names every third-party component the bundle ships
# with its licence, and their notices and full licence texts are THIRD_PARTY_NOTICES.txt
# beside it (the bundle's own copy, which Help > About points to).
doc="$share/doc/engram"
mkdir -p "$doc"
ln -s /opt/engram/THIRD_PARTY_NOTICES.txt "$doc/THIRD_PARTY_NOTICES.txt"
{
  echo "Engram Inspector $version, packaged from its PyInstaller bundle."
  echo
  echo "Copyright: the Engram Inspector contributors"
  echo "License: Apache-2.0"
  echo " On Debian systems the complete text of the Apache License 2.0 is in"
  echo " /usr/share/common-licenses/Apache-2.0 (and in /opt/engram/LICENSE)."
  echo
  echo "The program under /opt/engram ships the third-party software listed below, each"
  echo "under its own licence. Their copyright notices and complete licence texts are in"
  echo "/usr/share/doc/engram/THIRD_PARTY_NOTICES.txt (/opt/engram/THIRD_PARTY_NOTICES.txt)."
  echo "The GNU LGPL 3.0 and GPL 3.0 that Qt and PySide6 are used under are also in"
  echo "/usr/share/common-licenses/LGPL-3 and /usr/share/common-licenses/GPL-3."
  echo
  sed -n '/^Index (/,/^$/p' "$notices" | sed 's/^\* /  /'
} > "$doc/copyright"
chmod 644 "$doc/copyright"
date_r="$(date -R -u -d "@${SOURCE_DATE_EPOCH:-$(stat -c %Y "$bundle/engram")}")"
printf 'engram (%s) unstable; urgency=medium\n\n  * Built from the PyInstaller bundle by packaging/deb.sh.\n\n -- %s  %s\n' \
  "$version" "$maintainer" "$date_r" | gzip -9n > "$doc/changelog.gz"
chmod 644 "$doc/changelog.gz"
# Tags that follow from what the package is, a self-contained bundle under /opt: its own
# copies of Qt's and Python's libraries as their wheels built them (not stripped, split or
# linked against Debian's copies). Everything else lintian says is dealt with above.
install -Dm644 /dev/stdin "$share/lintian/overrides/engram" <<'EOF'
engram: dir-or-file-in-opt
engram: embedded-library
engram: unstripped-binary-or-object
engram: library-not-linked-against-libc
EOF

# What the bundle's binaries need from the system (it carries the rest): each library
# resolved outside the bundle, by the Debian package that holds it.
depends="$(
  find "$pkg/opt/engram" -type f \( -name '*.so*' -o -name engram \) -print0 \
    | { xargs -0 -r env LD_LIBRARY_PATH="$pkg/opt/engram/_internal" ldd 2>/dev/null || true; } \
    | awk -v own="$pkg/" '$2 == "=>" && $3 ~ /^\// && index($3, own) != 1 {print $3}' | sort -u \
    | while read -r lib; do
        dpkg -S "$lib" 2>/dev/null || dpkg -S "$(readlink -f "$lib")" 2>/dev/null || true
      done | cut -d: -f1 | sort -u | tr '\n' ' '
)"
# libc6 always (the bootloader), what Qt loads by name rather than by link (GL and EGL),
# and sensible-utils, whose sensible-pager the bundled util-linux libraries call.
deps="libc6"
for package in $depends libegl1 libgl1 sensible-utils; do
  case " $deps " in *" $package "*) ;; *) deps="$deps, $package" ;; esac
done
deps="${deps//, /,}"; deps="$(tr ',' '\n' <<<"$deps" | sort -u | paste -sd, | sed 's/,/, /g')"

size="$(du -sk --exclude=DEBIAN "$pkg" | cut -f1)"
cat > "$pkg/DEBIAN/control" <<EOF
Package: engram
Version: $version
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $size
Depends: $deps
Recommends: desktop-file-utils, shared-mime-info, hicolor-icon-theme
Section: utils
Priority: optional
Description: see and control what an AI agent remembers about a person
 Engram is a per-person memory engine for AI agents with a desktop inspector:
 every note an agent keeps about a person, who may see it, and a signed journal
 of every change. The inspector (engram desk) and the command line (engram)
 work offline, on the person's own machine; stores are encrypted at rest.
EOF
find "$pkg" -type d -exec chmod 755 {} +
mkdir -p "$out"
deb="$out/engram_${version}_${arch}.deb"
dpkg-deb --root-owner-group -Zxz --build "$pkg" "$deb" >&2
echo "$deb"
