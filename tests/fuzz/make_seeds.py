#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets (tests/fuzz/*/corpus/) from
real inputs: the profiles, the example tree's patch files and setup.py, wheels
as Python's zipfile writes them (ZIP64 included), package archives as tarfile
writes them (with the hostile entries extract_archive must refuse), real
cgroup v1 and v2 files. Run it again after a format changes; the corpora it
writes are committed. Usage: python3 tests/fuzz/make_seeds.py"""

import gzip
import io
import lzma
import pathlib
import shutil
import struct
import tarfile
import zipfile

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
SEP = b"\x1f"


def corpus(target):
    path = HERE / target / "corpus"
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    return path


def put(directory, name, data):
    (directory / name).write_bytes(data if isinstance(data, bytes) else data.encode())


def profiles():
    out = corpus("profile")
    for toml in sorted((ROOT / "profiles").glob("*.toml")):
        put(out, toml.name, toml.read_bytes())


def wheel_bytes(method, zip64=False, extra_files=()):
    data = io.BytesIO()
    files = {
        "demo/__init__.py": b"VALUE = 1\n",
        "demo/data.bin": b"x" * 3000 + b"tail",
        "demo-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n",
        "demo-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    files.update(dict(extra_files))
    import base64
    import hashlib

    record = ""
    for name, body in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(body).digest()).rstrip(b"=").decode()
        record += f"{name},sha256={digest},{len(body)}\n"
    record += "demo-1.0.dist-info/RECORD,,\n"
    with zipfile.ZipFile(data, "w", method) as archive:
        for name, body in list(files.items()) + [("demo-1.0.dist-info/RECORD", record.encode())]:
            info = zipfile.ZipInfo(name, (1980, 1, 1, 0, 0, 0))
            info.compress_type = method
            info.external_attr = 0o644 << 16
            with archive.open(info, "w", force_zip64=zip64) as entry:
                entry.write(body)
    return data.getvalue()


def wheels():
    out = corpus("zip_wheel")
    put(out, "deflated.whl", wheel_bytes(zipfile.ZIP_DEFLATED))
    put(out, "stored.whl", wheel_bytes(zipfile.ZIP_STORED))
    put(out, "zip64.whl", wheel_bytes(zipfile.ZIP_DEFLATED, zip64=True))
    put(out, "quoted-record.whl",
        wheel_bytes(zipfile.ZIP_DEFLATED, extra_files=[('demo/a,"b".txt', b"comma\n")]))
    put(out, "truncated.whl", wheel_bytes(zipfile.ZIP_DEFLATED)[:-30])


def tar_bytes(members, compression="gz"):
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w") as archive:
        for info, body in members:
            archive.addfile(info, io.BytesIO(body) if body is not None else None)
    if compression == "gz":  # dated 0, so that the seeds are the same each time
        return gzip.compress(data.getvalue(), mtime=0)
    return lzma.compress(data.getvalue())


def entry(name, body=b"", kind=tarfile.REGTYPE, link=""):
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = link
    info.mode = 0o755 if kind == tarfile.DIRTYPE else 0o644
    info.mtime = 315532800
    if kind == tarfile.REGTYPE:
        info.size = len(body)
        return info, body
    return info, None


def archives():
    out = corpus("archive")
    package = [entry("pkg", kind=tarfile.DIRTYPE), entry("pkg/bin", kind=tarfile.DIRTYPE),
               entry("pkg/bin/tool", b"#!/bin/sh\necho tool\n"),
               entry("pkg/lib/libx.so.1", b"\x7fELF" + b"\0" * 60),
               entry("pkg/lib/libx.so", kind=tarfile.SYMTYPE, link="libx.so.1"),
               entry("pkg/include/x.h", b"int x(void);\n")]
    # The first byte picks the member: even, the whole archive; odd, pkg/.
    put(out, "package-whole", b"\0" + tar_bytes(package))
    put(out, "package-member", b"\1" + tar_bytes(package))
    put(out, "package-xz", b"\1" + tar_bytes(package, "xz"))
    put(out, "dotdot", b"\0" + tar_bytes([entry("pkg/../../escape", b"out\n")]))
    put(out, "absolute", b"\0" + tar_bytes([entry("/tmp/ascend-setup-fuzz-absolute", b"out\n")]))
    put(out, "symlink-out", b"\0" + tar_bytes([entry("pkg/up", kind=tarfile.SYMTYPE, link="../..")]))
    put(out, "through-symlink", b"\0" + tar_bytes(
        [entry("pkg/up", kind=tarfile.SYMTYPE, link=".."), entry("pkg/up/sentinel", b"overwritten")]))
    put(out, "hardlink-out", b"\0" + tar_bytes([entry("pkg/h", kind=tarfile.LNKTYPE, link="../sentinel")]))
    # Links that leave only through the links before them (issue 38), and a
    # hard link to a symlink, whose text is read from the new name's directory.
    chained = [entry("pkg/c/b", kind=tarfile.SYMTYPE, link=".."),
               entry("pkg/a", kind=tarfile.SYMTYPE, link="c/b/c/b/c/b/c/b/../../../../outside"),
               entry("pkg/lib/escape", kind=tarfile.SYMTYPE,
                     link="../c/b/c/b/c/b/c/b/../../../../outside")]
    put(out, "chained-links-whole", b"\0" + tar_bytes(chained))
    put(out, "chained-links-member", b"\1" + tar_bytes(chained))
    put(out, "hardlinked-symlink", b"\0" + tar_bytes(
        [entry("pkg/d/s", kind=tarfile.SYMTYPE, link="../x"),
         entry("h", kind=tarfile.LNKTYPE, link="pkg/d/s")]))
    setuid, body = entry("pkg/suid", b"x")
    setuid.mode = 0o6777
    put(out, "setuid", b"\0" + tar_bytes([(setuid, body)]))
    put(out, "fifo", b"\0" + tar_bytes([entry("pkg/fifo", kind=tarfile.FIFOTYPE)]))
    put(out, "device", b"\0" + tar_bytes([entry("pkg/dev", kind=tarfile.CHRTYPE)]))
    put(out, "truncated", b"\0" + tar_bytes(package)[:200])
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, body in (("pkg/readme.txt", "zip member\n"), ("pkg/../zip-escape", "out\n")):
            archive.writestr(zipfile.ZipInfo(name, (1980, 1, 1, 0, 0, 0)), body)
    put(out, "zip", b"\1" + data.getvalue())


def diffs():
    out = corpus("unified_diff")
    for patch in sorted((ROOT / "examples").rglob("*.patch")):
        put(out, patch.name, patch.read_bytes())
    put(out, "new-file.patch",
        "diff --git a/new.txt b/new.txt\nnew file mode 100644\nindex 0000000..3b18e51\n"
        "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+hello\n+world\n")
    put(out, "deleted.patch",
        "diff --git a/old.txt b/old.txt\ndeleted file mode 100644\nindex 3b18e51..0000000\n"
        "--- a/old.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-hello\n")
    put(out, "no-newline.patch",
        "diff --git a/f.c b/f.c\n--- a/f.c\n+++ b/f.c\n@@ -1,2 +1,2 @@\n int a;\n-int b;\n"
        "\\ No newline at end of file\n+int c;\n\\ No newline at end of file\n")
    put(out, "rename.patch",
        "diff --git a/a.txt b/b.txt\nsimilarity index 90%\nrename from a.txt\nrename to b.txt\n"
        "--- a/a.txt\n+++ b/b.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n")
    put(out, "mode.patch", "diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n")
    put(out, "binary.patch",
        "diff --git a/x.bin b/x.bin\nindex 1111111..2222222 100644\nBinary files a/x.bin and b/x.bin differ\n")
    put(out, "crlf.patch",
        "diff --git a/w.txt b/w.txt\n--- a/w.txt\n+++ b/w.txt\n@@ -1,2 +1,2 @@\n keep\r\n-old\r\n+new\r\n")
    put(out, "plain.patch", "--- a/p.txt\n+++ b/p.txt\n@@ -1 +1 @@\n-a\n+b\n")
    put(out, "cut-short.patch", "diff --git a/c.txt b/c.txt\n--- a/c.txt\n+++ b/c.txt\n@@ -1,3 +1,3 @@\n a\n-b\n")


def cgroups():
    out = corpus("cgroup")
    meminfo = "MemTotal:       24576000 kB\nMemFree:        1000000 kB\n"
    put(out, "v2-quota", SEP.join([b"\0\4", b"0::/a\n", meminfo.encode(), b"200000 100000\n",
                                   b"8589934592\n", b"", b"", b""]))
    put(out, "v2-max", SEP.join([b"\0\x10", b"0::/a\n", meminfo.encode(), b"max 100000\n", b"max\n",
                                 b"", b"", b""]))
    put(out, "v1", SEP.join([b"\1\x08", b"12:memory:/a\n4:cpu,cpuacct:/a\n0::/\n", meminfo.encode(),
                             b"", b"", b"150000\n", b"100000\n", b"9223372036854771712\n"]))
    put(out, "v1-none", SEP.join([b"\1\x02", b"4:cpu,cpuacct:/a\n", b"", b"", b"", b"-1\n",
                                  b"100000\n", b""]))


def proxies():
    out = corpus("proxy_settings")
    put(out, "suffix", b"localhost,.corp.example,10.0.0.0/8" + SEP + b"https://Downloads.Corp.Example/pkg.tar.gz")
    put(out, "ipv6", b"[::1]:8443,fd00::/8" + SEP + b"https://[::1]:8443/x")
    put(out, "star", b"*" + SEP + b"http://user:pass@127.0.0.1:3128")
    put(out, "port", b"example.com:8080" + SEP + b"http://example.com:8080/a?b#c")


def shown_urls():
    out = corpus("shown_url")
    put(out, "proxy-refusal", "ascend-setup: error: the proxy http://alice:s3cret@127.0.0.1:3128 "
        "(from https_proxy) refused the way to https://h.org (HTTP 407)")
    put(out, "compile-cache", "ASCEND_SETUP_COMPILE_CACHE `redis://:pw@cache.ci:6379/x|"
        "bearer-token=t|keep-alive=true`: redis's path `/x` is not /DATABASE-NUMBER")
    put(out, "query", "fetching https://m.ci/llvm/x.tar.gz?X-Amz-Security-Token=a&token=b#f")
    put(out, "git", "git@github.com:triton-lang/triton.git ssh://git@host/r /home/a@b:c")


def versions():
    out = corpus("version")
    setup_py = (ROOT / "examples" / "triton-3.6" / "setup.py").read_bytes()
    put(out, "example-tree", setup_py + SEP + b"3.6.0\n" + SEP + b"3.6.0rc1.post2.dev3" + SEP + b"+ascend")
    put(out, "version-file", b"print('no literal')\n" + SEP + b"  3.5.1+local\n" + SEP + b"1!2.0" + SEP + b"")
    put(out, "dunder", b"__version__ = '3.4.0'\nTRITON_VERSION = \"3.6.0\" + x\n" + SEP + b"" + SEP +
        b"v3.6.0-1" + SEP + b"+a.b")


# Seeds that are a line or two of text, by target.
TEXT_SEEDS = {
    "distcc_hosts": {
        "tcp": "127.0.0.2:3632/8 127.0.0.3/4,lzo localhost/2",
        "options": "--randomize --localslots=4 --localslots_cpp=8 +zeroconf",
        "ssh": "user@build-1/6 @build-2 [::1]:3633/3,lzo,cpp # comment\n10.0.0.1",
        "bad": "host:99999/0 host/-1 :/",
    },
    "proc_stat": {
        "plain": "1234 (bash) S 1000 1234 1234 34816 1234 4194560 100 0 0 0\n",
        "paren": "77 (a) b) (c) Z 1 77 77 0 -1 4194560 0 0 0 0\n",
        "short": "5 (x)",
    },
    "pyvenv_cfg": {
        "venv": "home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.11.2\n",
        "uv": "home = /opt/python/3.12/bin\nimplementation = CPython\nversion_info = 3.12.7.final.0\n",
        "odd": "home=/x = y\nversion = 3\nversion = 3.99999999999999999999\n",
    },
    # The target lays a JSON object's keys over the true digests of its previous
    # wheel: "{}" is those digests, the others spoil one part of them.
    "wheel_digests": {
        "true": "{}",
        "another-wheel": '{"wheel_size": 1234, "directory_sha256": "' + "ab" * 32 + '"}',
        "entries": '{"entries": {"demo/data.bin": {"method": 8, "size": 3004, "compressed_size": 20, '
                   '"hash": "sha256=x", "chunks": [[20, "' + "00" * 32 + '", "' + "11" * 32 + '"]]}, '
                   '"demo/empty.txt": {"method": 8, "size": 0, "compressed_size": 2, "hash": "sha256=y", '
                   '"chunks": [[2, "' + "22" * 32 + '", "' + "33" * 32 + '"]]}}}',
        "format": '{"format": 2, "chunk_size": 65536}',
        "not-json": "\x89PNG\r\n\x1a\n",
    },
    "lock_holder": {
        "holder": "4242 build-host-1\n",
        "pid-only": "4242",
        "torn": "42",
        "bad": "-1 host\n99999999999 h\n",
    },
    "http_response": {
        "partial": "HTTP/1.1 206 Partial Content\r\nETag: \"abc\"\r\nLast-Modified: Tue, 01 Dec 2026 10:00:00 GMT\r\n" "Content-Range: bytes 100-199/1000\r\nContent-Length: 100\r\n\r\n",
        "proxy-then-server": "HTTP/1.1 200 Connection established\r\n\r\nHTTP/2 200\r\ncontent-length: 12\r\n" "etag: W/\"x\"\r\n\r\n",
        "unknown-total": "HTTP/1.0 416 Range Not Satisfiable\r\nContent-Range: bytes */1000\r\n" "Content-Range: bytes 0-0/*\r\n\r\n",
        "bad": "HTTP/1.1 99999999999999999999 x\r\nContent-Length: 12abc\r\nContent-Range: bytes 5-2/3\r\n",
    },
    "gitmodules": {
        "absolute": '[submodule "nested/sub"]\n\tpath = nested/sub\n\turl = https://gitcode.com/Ascend/sub.git\n',
        "relative": '[submodule "sub"]\n\tpath = nested/sub\n\turl = ../sub.git\n\tbranch = main\n',
        "none": '# no submodule\n',
        "quoted": '[submodule "nested/sub"]\n  path = "nested/sub" ; comment\n  url = "git@host:sub\\\n.git"\n[include]\n  path = /etc/gitconfig\n',
    },
}


def elf_image(needed, dynamic=True, elf_class=2, byte_order=1):
    """An x86_64 executable's headers as a linker lays them out: one loaded
    segment at 0x400000 holding the string table and the dynamic section."""
    base = 0x400000
    strtab = b"\0" + b"".join(name.encode() + b"\0" for name in needed)
    phnum = 2 if dynamic else 1
    strtab_at = 64 + phnum * 56
    dynamic_at = (strtab_at + len(strtab) + 7) // 8 * 8
    offsets, at = [], 1
    for name in needed:
        offsets.append(at)
        at += len(name) + 1
    entries = [(1, offset) for offset in offsets]  # DT_NEEDED
    entries += [(5, base + strtab_at), (10, len(strtab)), (0, 0)]  # DT_STRTAB, DT_STRSZ, DT_NULL
    dynamic_bytes = b"".join(struct.pack("<qQ", tag, value) for tag, value in entries)
    size = dynamic_at + (len(dynamic_bytes) if dynamic else 0)
    header = (b"\x7fELF" + bytes([elf_class, byte_order, 1, 0]) + bytes(8)
              + struct.pack("<HHIQQQIHHHHHH", 2, 62, 1, base, 64, 0, 0, 64, 56, phnum, 64, 0, 0))
    segments = struct.pack("<IIQQQQQQ", 1, 5, 0, base, base, size, size, 0x1000)
    if dynamic:
        segments += struct.pack("<IIQQQQQQ", 2, 6, dynamic_at, base + dynamic_at, base + dynamic_at,
                                len(dynamic_bytes), len(dynamic_bytes), 8)
    image = header + segments + strtab
    image += bytes(dynamic_at - len(image))
    return image + (dynamic_bytes if dynamic else b"")


def elf_images():
    out = corpus("elf_needed")
    put(out, "on-libpython", elf_image(["libpython3.11.so.1.0", "libm.so.6", "libc.so.6"]))
    put(out, "carries-the-interpreter", elf_image(["libm.so.6", "libz.so.1", "libexpat.so.1",
                                                   "libc.so.6"]))
    put(out, "static", elf_image([], dynamic=False))
    put(out, "elf32", elf_image(["libc.so.6"], elf_class=1))
    put(out, "big-endian", elf_image(["libc.so.6"], byte_order=2))


def text_seeds():
    for target, seeds in TEXT_SEEDS.items():
        out = corpus(target)
        for name, text in seeds.items():
            put(out, name, text)


def main():
    text_seeds()
    profiles()
    wheels()
    archives()
    diffs()
    cgroups()
    proxies()
    shown_urls()
    versions()
    elf_images()


if __name__ == "__main__":
    main()
