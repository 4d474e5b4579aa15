# calyx shell integration for fish. calyx starts fish with its own directory first in
# XDG_DATA_DIRS, so fish sources this vendor_conf.d file; it puts the user's XDG_DATA_DIRS back
# at once, then reports each command to calyx in-band: OSC 133 C (with the command line) before
# it runs, OSC 133 D (exit code) when it ends, OSC 7 (working directory) and OSC 133 A at each
# prompt. Event handlers and `string` are builtins: no processes per command.

if set -q CALYX_FISH_XDG_DATA_DIRS
    set -gx XDG_DATA_DIRS $CALYX_FISH_XDG_DATA_DIRS
    set -e CALYX_FISH_XDG_DATA_DIRS
else
    set -e XDG_DATA_DIRS
end

if status is-interactive; and not set -q __calyx_installed
    set -g __calyx_installed 1

    function __calyx_prompt --on-event fish_prompt
        printf '\e]7;file://%s%s\a\e]133;A\a' $hostname (string escape --style=url -- $PWD)
    end

    function __calyx_preexec --on-event fish_preexec
        printf '\e]133;C;cmdline_url=%s\a' (string escape --style=url -- $argv[1])
    end

    function __calyx_postexec --on-event fish_postexec
        printf '\e]133;D;%s\a' $status
    end
end
