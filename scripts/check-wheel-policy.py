#!/usr/bin/python3
"""Checks a wheel against a manylinux policy the way `auditwheel show` judges
it, without auditwheel (this machine has no PyPI): every ELF member's
DT_NEEDED libraries and symbol version needs, its machine, and the wheel's
platform tag.

  scripts/check-wheel-policy.py WHEEL [--policy manylinux_2_34] [--json]

Run with /usr/bin/python3 and Debian's python3-pyelftools. One line per
problem goes to stderr; a summary (or, with --json, one JSON object) to
stdout. Exits 0 when the wheel complies, 1 when it does not, 2 on bad input.

What auditwheel checks and this does too: a library the wheel leaves to the
system must be on the policy's whitelist unless the ELF finds it inside the
wheel through an $ORIGIN RPATH/RUNPATH; the dynamic loader itself is always
allowed; libpython never is (auditwheel >= 6.4's repair strips it: "Linking
with libpython is forbidden"); version needs of a name the policy lists
(GLIBC, GLIBCXX, CXXABI, GCC, LIBATOMIC, ZLIB) must be allowed, those of
other names (OPENSSL_3.0.0) are left to the whitelist check; symbols the
policy blacklists for a needed library must not be imported.

The wheel's SBOM too, when it has one (`*.dist-info/sbom.cdx.json`,
CycloneDX, as ascend-setup's own wheel carries): a library it says is older
than Debian's newer version of it (the property
ascend-setup:newer-debian-version: a security update the build did not
get) is a problem, one line each, unless the environment has
ASCEND_SETUP_ALLOW_OLDER_STATIC=1, which turns them into one line saying
which libraries are older and that the variable allowed them.

What it does not do: follow the wheel's libraries into the system (auditwheel
grafts those), or stand up to hostile files (a damaged ELF member is reported,
but some damage makes pyelftools 0.29 loop for minutes).
"""
import argparse
import io
import json
import os
import posixpath
import re
import sys
import zipfile

try:
    from elftools.elf.dynamic import DynamicSection
    from elftools.elf.elffile import ELFFile
    from elftools.elf.gnuversions import GNUVerNeedSection
    from elftools.elf.sections import SymbolTableSection
except ImportError:  # exit 2, not 1: nothing was checked
    print("check-wheel-policy: needs pyelftools: apt-get install python3-pyelftools, "
          "then run with /usr/bin/python3", file=sys.stderr)
    sys.exit(2)

# Values read from pypa/auditwheel, src/auditwheel/policy/manylinux-policy.json
# at tag 6.8.1 (the file is unchanged up to commit 86154d1). auditwheel accepts
# exactly the versions listed there; this table keeps each name's highest
# numbered version plus the listed non-numbered ones. That accepts the same
# versions for every version the real libraries define: the list's gaps (no
# GLIBC 2.19-2.21 on x86_64) are versions glibc never defined there (checked
# against the version definitions of Debian 12's x86_64 libc, libm,
# libstdc++, libgcc_s, libz and libatomic).
POLICIES = {
    "manylinux_2_34": {
        "whitelist": {
            "libatomic.so.1", "libgcc_s.so.1", "libstdc++.so.6", "libm.so.6",
            "libmvec.so.1", "libanl.so.1", "libdl.so.2", "librt.so.1",
            "libc.so.6", "libnsl.so.1", "libutil.so.1", "libpthread.so.0",
            "libX11.so.6", "libXext.so.6", "libXrender.so.1", "libICE.so.6",
            "libSM.so.6", "libGL.so.1", "libgobject-2.0.so.0",
            "libgthread-2.0.so.0", "libglib-2.0.so.0", "libresolv.so.2",
            "libexpat.so.1", "libz.so.1",
        },
        "max_versions": {
            "x86_64": {"GLIBC": "2.34", "GLIBCXX": "3.4.29", "CXXABI": "1.3.13",
                       "GCC": "7.0.0", "LIBATOMIC": "1.2", "ZLIB": "1.2.9"},
            "aarch64": {"GLIBC": "2.34", "GLIBCXX": "3.4.29", "CXXABI": "1.3.13",
                        "GCC": "11.0", "LIBATOMIC": "1.2", "ZLIB": "1.2.9"},
        },
        "other_versions": {
            "x86_64": {"CXXABI": {"FLOAT128", "TM_1"}},
            "aarch64": {"CXXABI": {"TM_1"}},
        },
        # zlib's internals, outside its API: not every libz exports them.
        "blacklist": {
            "libz.so.1": set("""
                _dist_code _length_code _tr_align _tr_flush_block _tr_init
                _tr_stored_block _tr_tally adler32_default bi_windup crc32_acle
                crc32_combine_gen crc32_combine_gen64 crc32_combine_op
                crc32_le_vgfm_16 crc32_neon crc32_vpmsum crc32_z_default
                crc_fold_512to32 crc_fold_copy crc_fold_init deflate_copyright
                deflate_medium fill_window flush_pending gzflags
                inflate_copyright inflate_fast inflate_table longest_match
                slide_hash_sse static_ltree x86_check_features
                x86_cpu_has_pclmul x86_cpu_has_sse2 x86_cpu_has_sse42
                sse2_slide_hash z_errmsg z_vstring zcalloc zcfree""".split()),
        },
    },
}
MACHINES = {"x86_64": "EM_X86_64", "aarch64": "EM_AARCH64"}
NUMBER = re.compile(r"\d+(\.\d+)*")


class BadInput(Exception):
    pass


def is_loader(soname):
    return soname.startswith("ld-linux") or soname in ("ld64.so.1", "ld64.so.2")


def numbers(version):
    return tuple(int(part) for part in version.split("."))


def version_allowed(need, max_versions, other_versions):
    """Whether a version need such as GLIBC_2.34 or CXXABI_TM_1 is allowed."""
    name, _, version = need.partition("_")
    if name not in max_versions:
        return True
    if NUMBER.fullmatch(version):
        return numbers(version) <= numbers(max_versions[name])
    return version in other_versions.get(name, set())


def platform_tags(wheel_path, zf):
    """The wheel's platform tags: from its file name and from WHEEL's Tag lines."""
    name = posixpath.basename(wheel_path)
    parts = name[:-len(".whl")].split("-") if name.endswith(".whl") else []
    if len(parts) not in (5, 6):
        raise BadInput(f"{name}: not a wheel file name (name-version-py-abi-platform.whl)")
    from_name = parts[-1].split(".")
    wheel_files = [m for m in zf.namelist()
                   if re.fullmatch(r"[^/]+\.dist-info/WHEEL", m)]
    if len(wheel_files) != 1:
        raise BadInput(f"{name}: expected one *.dist-info/WHEEL, found {len(wheel_files)}")
    text = zf.read(wheel_files[0]).decode("utf-8", "replace")
    from_wheel = [line.split(":", 1)[1].strip().split("-")[-1]
                  for line in text.splitlines() if line.startswith("Tag:")]
    return from_name, from_wheel, wheel_files[0]


def check_elf(member, data, names, policy, arch, problem):
    """Reports member's problems; names are all the wheel's member names."""
    try:
        elf = ELFFile(io.BytesIO(data))
        machine = elf["e_machine"]
        if machine != MACHINES[arch]:
            problem(member, "machine", f"is {machine}, the wheel's tag says {arch}")
        needed, search_path = [], []
        for section in elf.iter_sections():
            if isinstance(section, DynamicSection):
                for tag in section.iter_tags():
                    if tag.entry.d_tag == "DT_NEEDED":
                        needed.append(tag.needed)
                    elif tag.entry.d_tag == "DT_RPATH":
                        search_path += tag.rpath.split(":")
                    elif tag.entry.d_tag == "DT_RUNPATH":
                        search_path += tag.runpath.split(":")
        # A library the wheel bundles is fine if the loader can find it there,
        # i.e. through an $ORIGIN entry (any other entry leads out of the wheel).
        here = posixpath.dirname(member)
        bundled_dirs = [posixpath.normpath(entry.replace("${ORIGIN}", here).replace("$ORIGIN", here))
                        for entry in search_path if "ORIGIN" in entry]
        for lib in needed:
            if lib.startswith("libpython"):
                problem(member, "libpython", f"needs {lib}: linking with libpython is forbidden")
            elif is_loader(lib) or lib in policy["whitelist"]:
                continue
            elif not any(posixpath.join(d, lib) in names for d in bundled_dirs):
                problem(member, "library", f"needs {lib}, which is not on {policy['name']}'s whitelist")
        max_versions = policy["max_versions"][arch]
        other_versions = policy["other_versions"][arch]
        for section in elf.iter_sections():
            if isinstance(section, GNUVerNeedSection):
                for verneed, auxiliaries in section.iter_versions():
                    if is_loader(verneed.name):
                        continue
                    for aux in auxiliaries:
                        if not version_allowed(aux.name, max_versions, other_versions):
                            problem(member, "version",
                                    f"needs {aux.name} from {verneed.name}, above {policy['name']}")
        blacklisted = {}
        for lib in needed:
            blacklisted.update({s: lib for s in policy["blacklist"].get(lib, ())})
        dynsym = elf.get_section_by_name(".dynsym")
        if blacklisted and isinstance(dynsym, SymbolTableSection):
            for symbol in dynsym.iter_symbols():
                if symbol["st_shndx"] == "SHN_UNDEF" and symbol.name in blacklisted:
                    problem(member, "blacklist",
                            f"imports {symbol.name} from {blacklisted[symbol.name]}, "
                            f"blacklisted by {policy['name']}")
    # pyelftools raises more than ELFError on a damaged file (TypeError,
    # KeyError, ...): any of them makes the member a problem, not a crash.
    except Exception as error:
        problem(member, "unreadable",
                f"is not a readable ELF file ({type(error).__name__}: {error})")


NEWER_DEBIAN_VERSION = "ascend-setup:newer-debian-version"
ALLOW_OLDER = "ASCEND_SETUP_ALLOW_OLDER_STATIC"


def older_libraries(zf, problem):
    """(SBOM member, [line per library older than Debian's newer version])."""
    sboms = [m for m in zf.namelist() if re.fullmatch(r"[^/]+\.dist-info/sbom\.cdx\.json", m)]
    if not sboms:
        return None, []
    older = []
    try:
        bom = json.loads(zf.read(sboms[0]))
        for component in bom.get("components", []):
            properties = {p["name"]: p["value"] for p in component.get("properties", [])}
            if NEWER_DEBIAN_VERSION in properties:
                linked = properties.get("ascend-setup:debian-version", component.get("version"))
                older.append(f"{component['name']} {component.get('version')} (Debian {linked}) is "
                             f"older than Debian's newer version {properties[NEWER_DEBIAN_VERSION]}")
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        problem(sboms[0], "sbom", f"is not a readable CycloneDX SBOM ({type(error).__name__}: {error})")
    return sboms[0], older


def check_wheel(wheel_path, policy_name):
    """Returns (target tag, number of ELF members, problems, the lines of the
    libraries older than Debian's that ASCEND_SETUP_ALLOW_OLDER_STATIC=1 allowed)."""
    if policy_name not in POLICIES:
        raise BadInput(f"unknown policy {policy_name} (known: {', '.join(POLICIES)})")
    policy = dict(POLICIES[policy_name], name=policy_name)
    problems = []

    def problem(member, kind, detail):
        problems.append({"member": member, "kind": kind, "detail": detail})

    try:
        zf = zipfile.ZipFile(wheel_path)
    except (OSError, zipfile.BadZipFile) as error:
        raise BadInput(f"{wheel_path}: not a readable zip file ({error})") from None
    with zf:
        from_name, from_wheel, wheel_file = platform_tags(wheel_path, zf)
        arches = {arch for tag in from_name for arch in MACHINES if tag.endswith("_" + arch)}
        if len(arches) != 1:
            raise BadInput(f"{wheel_path}: cannot tell one architecture from the platform tag "
                           f"{'.'.join(from_name)} (known: {', '.join(MACHINES)})")
        arch = arches.pop()
        target = f"{policy_name}_{arch}"
        if from_name != [target]:
            problem(posixpath.basename(wheel_path), "tag",
                    f"file name's platform tag is {'.'.join(from_name)}, not {target}")
        if not from_wheel:
            problem(wheel_file, "tag", "has no Tag: line")
        for tag in from_wheel:
            if tag != target:
                problem(wheel_file, "tag", f"says Tag: ...-{tag}, not {target}")
        names = set(zf.namelist())
        elf_count = 0
        for info in zf.infolist():
            if info.is_dir():
                continue
            with zf.open(info) as stream:
                if stream.read(4) != b"\x7fELF":
                    continue
            elf_count += 1
            check_elf(info.filename, zf.read(info), names, policy, arch, problem)
        if elf_count == 0:
            problem(posixpath.basename(wheel_path), "no-elf",
                    f"holds no ELF file, so it should not carry a {policy_name} tag")
        sbom, older = older_libraries(zf, problem)
        allowed = []
        if older and os.environ.get(ALLOW_OLDER) == "1":
            allowed = older
        else:
            for line in older:
                problem(sbom, "older", line)
    return target, elf_count, problems, allowed


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("wheel")
    parser.add_argument("--policy", default="manylinux_2_34")
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    args = parser.parse_args()
    try:
        target, elf_count, problems, allowed = check_wheel(args.wheel, args.policy)
    except BadInput as error:
        print(f"check-wheel-policy: {error}", file=sys.stderr)
        return 2
    if allowed:
        names = ", ".join(line.split(" ", 1)[0] for line in allowed)
        print(f"check-wheel-policy: {names} older than Debian's newer versions, "
              f"allowed by {ALLOW_OLDER}=1", file=sys.stderr)
    for p in problems:
        print(f"{p['member']}: {p['detail']}", file=sys.stderr)
    if args.json:
        json.dump({"wheel": args.wheel, "target": target, "elf_files": elf_count,
                   "ok": not problems, "problems": problems, "allowed_older": allowed},
                  sys.stdout, indent=2)
        print()
    else:
        verdict = "ok" if not problems else f"{len(problems)} problem(s)"
        print(f"{elf_count} ELF files checked against {target}: {verdict}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
