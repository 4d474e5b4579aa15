# calyx shell integration for bash. calyx starts bash with `--rcfile` pointing here, so this file
# first does what bash does for an interactive shell, then reports each command to calyx in-band:
# OSC 133 C (with the command line) before it runs, OSC 133 D (exit code) when it ends, OSC 7
# (working directory) and OSC 133 A at each prompt. Only builtins run per command: no processes.

if [ -r /etc/bash.bashrc ]; then . /etc/bash.bashrc; fi
if [ -r "$HOME/.bashrc" ]; then . "$HOME/.bashrc"; fi

if [[ $- == *i* && -z ${__calyx_installed-} ]]; then
    __calyx_installed=1
    __calyx_running=
    __calyx_at_prompt=
    __calyx_hist_last=
    # `history 1` is the only way to the whole command line; a builtin writing to a file and
    # `read` taking it back costs no process (a $(...) would fork one per command).
    __calyx_hist_file="${CALYX_SHELL_DIR:-${TMPDIR:-/tmp}}/.bash-history-$$"
    unset CALYX_SHELL_DIR

    __calyx_precmd() {
        local ret=$?
        if [[ -n $__calyx_running ]]; then
            builtin printf '\e]133;D;%s\a' "$ret"
            __calyx_running=
        fi
        local cwd=${PWD//%/%25}
        cwd=${cwd// /%20}
        builtin printf '\e]7;file://%s%s\a\e]133;A\a' "${HOSTNAME-}" "$cwd"
        return $ret
    }

    __calyx_prompt_ready() {
        local ret=$?
        __calyx_at_prompt=1
        return $ret
    }

    __calyx_preexec() {
        [[ -n $__calyx_at_prompt ]] || return 0
        # An empty line (or C-c) at the prompt runs PROMPT_COMMAND again without a command.
        if [[ $BASH_COMMAND == __calyx_precmd* ]]; then
            __calyx_at_prompt=
            return 0
        fi
        __calyx_at_prompt=
        __calyx_running=1
        local line= text=$BASH_COMMAND
        HISTTIMEFORMAT= builtin history 1 >|"$__calyx_hist_file" 2>/dev/null &&
            IFS= builtin read -r -d '' line <"$__calyx_hist_file"
        if [[ $line =~ ^[[:space:]]*([0-9]+)[*]?[[:space:]]+(.*)$ ]]; then
            # An unchanged history number means this line was not saved (ignorespace, ...).
            if [[ ${BASH_REMATCH[1]} != "$__calyx_hist_last" ]]; then
                __calyx_hist_last=${BASH_REMATCH[1]}
                text=${BASH_REMATCH[2]}
                text=${text%$'\n'}
            fi
        fi
        builtin printf '\e]133;C;cmdline=%s\a' "${text//[$'\e\a']/}"
        return 0
    }

    # Keep whatever the user's files set up: our status hook goes first (it must see $?),
    # the ready flag last, and an existing DEBUG trap still runs after ours.
    if [[ ${BASH_VERSINFO[0]} -ge 5 && ${PROMPT_COMMAND@a} == *a* ]]; then
        PROMPT_COMMAND=(__calyx_precmd "${PROMPT_COMMAND[@]}" __calyx_prompt_ready)
    else
        PROMPT_COMMAND="__calyx_precmd${PROMPT_COMMAND:+$'\n'$PROMPT_COMMAND}"$'\n'"__calyx_prompt_ready"
    fi
    __calyx_old_debug=$(builtin trap -p DEBUG)
    __calyx_old_debug=${__calyx_old_debug#"trap -- '"}
    __calyx_old_debug=${__calyx_old_debug%"' DEBUG"}
    __calyx_old_debug=${__calyx_old_debug//"'\\''"/"'"}
    builtin trap "__calyx_preexec${__calyx_old_debug:+; $__calyx_old_debug}" DEBUG
    unset __calyx_old_debug
fi
