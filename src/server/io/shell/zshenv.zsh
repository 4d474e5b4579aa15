# calyx shell integration for zsh. calyx starts zsh with ZDOTDIR pointing at this file's
# directory; it puts the user's ZDOTDIR back at once, so every other startup file zsh reads is
# the user's own, then adds hooks that report each command to calyx in-band: OSC 133 C (with
# the command line) before it runs, OSC 133 D (exit code) when it ends, OSC 7 (working
# directory) and OSC 133 A at each prompt. Hooks are shell functions: no processes per command.

if [[ -n ${CALYX_ZSH_ZDOTDIR+set} ]]; then
    ZDOTDIR=$CALYX_ZSH_ZDOTDIR
    unset CALYX_ZSH_ZDOTDIR
else
    unset ZDOTDIR
fi

{
    if [[ -f ${ZDOTDIR:-$HOME}/.zshenv ]]; then
        source ${ZDOTDIR:-$HOME}/.zshenv
    fi
} always {
    if [[ -o interactive && -z ${__calyx_installed-} ]]; then
        typeset -g __calyx_installed=1 __calyx_running=

        __calyx_precmd() {
            local ret=$?
            if [[ -n $__calyx_running ]]; then
                builtin printf '\e]133;D;%s\a' $ret
                __calyx_running=
            fi
            local cwd=${PWD//\%/%25}
            cwd=${cwd// /%20}
            builtin printf '\e]7;file://%s%s\a\e]133;A\a' "${HOST-}" "$cwd"
            return $ret
        }

        __calyx_preexec() {
            __calyx_running=1
            builtin printf '\e]133;C;cmdline=%s\a' "${1//[$'\e\a']/}"
        }

        # Our status hook goes first (it must see $?); the user's hooks stay.
        typeset -ga precmd_functions preexec_functions
        precmd_functions=(__calyx_precmd ${precmd_functions:#__calyx_precmd})
        preexec_functions+=(__calyx_preexec)
    fi
}
