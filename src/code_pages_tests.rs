use super::*;

const EXE: &str = "/usr/bin/calyx";

/// A mapping's header and fields as smaps prints them.
fn mapping(range: &str, perms: &str, path: &str, rss: &str, anon: &str, flags: &str) -> String {
    format!(
        "{range} {perms} 00000000 fd:01 1234                       {path}\n\
         Size:               2048 kB\n\
         Rss:                {rss}\n\
         Pss:                 100 kB\n\
         Anonymous:          {anon}\n\
         Locked:                0 kB\n\
         VmFlags: {flags}\n"
    )
}

#[test]
fn only_the_executables_read_only_private_mappings_without_copies_are_chosen() {
    let smaps = [
        // The ELF headers and read-only data, then the text: released.
        mapping("1000-3000", "r--p", EXE, "512 kB", "0 kB", "rd mr mw me"),
        mapping(
            "3000-9000",
            "r-xp",
            EXE,
            "4096 kB",
            "0 kB",
            "rd ex mr mw me",
        ),
        // RELRO: read-only now, but its pages were relocated (copied on write): kept.
        mapping("9000-a000", "r--p", EXE, "8 kB", "8 kB", "rd mr mw me ac"),
        // Data: writable, kept.
        mapping(
            "a000-b000",
            "rw-p",
            EXE,
            "8 kB",
            "8 kB",
            "rd wr mr mw me ac",
        ),
        // A shared library and the vdso: not the executable, kept.
        mapping(
            "7f00-7f10",
            "r-xp",
            "/usr/lib/x86_64-linux-gnu/libc.so.6",
            "900 kB",
            "0 kB",
            "rd ex",
        ),
        mapping("7f20-7f21", "r-xp", "[vdso]", "4 kB", "0 kB", "rd ex"),
        // Locked text: madvise would refuse it; kept.
        mapping("c000-d000", "r-xp", EXE, "64 kB", "0 kB", "rd ex lo"),
        // Nothing resident: nothing to release.
        mapping("d000-e000", "r-xp", EXE, "0 kB", "0 kB", "rd ex"),
        // A shared mapping of the same file: kept.
        mapping("e000-f000", "r--s", EXE, "4 kB", "0 kB", "rd sh"),
    ]
    .concat();
    let chosen = droppable(&smaps, EXE);
    assert_eq!(
        chosen,
        vec![
            Droppable {
                range: 0x1000..0x3000,
                resident_kib: 512
            },
            Droppable {
                range: 0x3000..0x9000,
                resident_kib: 4096
            },
        ]
    );
}

#[test]
fn a_replaced_binary_is_still_the_executable() {
    let smaps = mapping(
        "3000-9000",
        "r-xp",
        "/usr/bin/calyx (deleted)",
        "64 kB",
        "0 kB",
        "rd ex",
    );
    assert_eq!(droppable(&smaps, EXE).len(), 1);
    // /proc/self/exe says so too once the file is gone.
    assert_eq!(droppable(&smaps, "/usr/bin/calyx (deleted)").len(), 1);
    // A path that only starts like the executable's is another file.
    let other = mapping(
        "3000-9000",
        "r-xp",
        "/usr/bin/calyx2",
        "64 kB",
        "0 kB",
        "rd ex",
    );
    assert!(droppable(&other, EXE).is_empty());
    // No executable path known: nothing is chosen.
    assert!(droppable(&smaps, "").is_empty());
}

#[test]
fn odd_lines_are_skipped_and_a_mapping_with_unreadable_fields_is_kept() {
    let smaps = [
        "garbage line without structure\n".to_string(),
        "\n".to_string(),
        "zzzz-1000 r-xp 00000000 fd:01 1 /usr/bin/calyx\n".to_string(),
        "9000-1000 r-xp 00000000 fd:01 1 /usr/bin/calyx\n".to_string(),
        "1000-2000 r-x 00000000 fd:01 1 /usr/bin/calyx\n".to_string(),
        // Unreadable Rss: kept.
        mapping("1000-2000", "r-xp", EXE, "lots kB", "0 kB", "rd ex"),
        // No Anonymous field at all: kept.
        "2000-3000 r-xp 00000000 fd:01 1 /usr/bin/calyx\nRss: 4 kB\nVmFlags: rd ex\n".to_string(),
        // No VmFlags (cannot tell whether it is locked): kept.
        "3000-4000 r-xp 00000000 fd:01 1 /usr/bin/calyx\nRss: 4 kB\nAnonymous: 0 kB\n".to_string(),
        // A truncated header is no mapping of its own (the one before, without VmFlags, is kept).
        "4000-5000 r-xp 0000\nRss: 4 kB\n".to_string(),
        // A good one at the end, after all that.
        mapping("5000-6000", "r-xp", EXE, "4 kB", "0 kB", "rd ex"),
    ]
    .concat();
    assert_eq!(
        droppable(&smaps, EXE),
        vec![Droppable {
            range: 0x5000..0x6000,
            resident_kib: 4
        }]
    );
    assert!(droppable("", EXE).is_empty());
}

#[test]
fn a_missing_smaps_file_is_an_error_not_a_panic() {
    let dir = tempfile::tempdir().expect("tempdir");
    let missing = dir.path().join("no-such-smaps");
    let err = release_from(&missing, Path::new(EXE)).expect_err("no file");
    assert!(matches!(err, ReleaseError::Read { .. }), "{err}");
    assert!(err.to_string().contains("no-such-smaps"), "{err}");
}

/// A function reached through a vtable: its pointer lives in the relocated (RELRO) data that a
/// release must leave alone.
fn through_a_vtable(f: &dyn Fn(u32) -> String, n: u32) -> String {
    f(n)
}

#[test]
fn releasing_this_processs_code_pages_leaves_it_running_unchanged() {
    let before = through_a_vtable(&|n| format!("{n:>4}|{}", ["a", "b"][n as usize % 2]), 7);
    let released = release_code_pages().expect("release");
    // This test's own code is running, so some of the executable was resident.
    assert!(released.mappings >= 1, "{released:?}");
    assert!(released.resident_kib > 0, "{released:?}");
    // Code and relocated data are read again from the page cache: same results.
    let after = through_a_vtable(&|n| format!("{n:>4}|{}", ["a", "b"][n as usize % 2]), 7);
    assert_eq!(before, after);
    assert_eq!(after, "   7|b");
    // And again: a second release finds the pages mapped back and releases them too.
    let again = release_code_pages().expect("second release");
    assert!(again.mappings >= 1, "{again:?}");
}
