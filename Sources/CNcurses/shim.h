// ncursesw for Swift: wide-character API on, and the macros and globals Swift cannot use directly
// wrapped as inline functions (see shared/NCURSES_NOTES.md).
#ifndef RECEIPTDESK_CNCURSES_SHIM_H
#define RECEIPTDESK_CNCURSES_SHIM_H

#define NCURSES_WIDECHAR 1
#ifndef _XOPEN_SOURCE_EXTENDED
#define _XOPEN_SOURCE_EXTENDED 1
#endif
#include <locale.h>
#include <langinfo.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>
#include <ncursesw/curses.h>
#include <ncursesw/term.h>

extern int wcwidth(wchar_t);

static inline FILE *rd_stdout(void) { return stdout; }
static inline FILE *rd_stdin(void) { return stdin; }
static inline int rd_locale_is_utf8(void) {
    const char *codeset = nl_langinfo(CODESET);
    return codeset != NULL && strcmp(codeset, "UTF-8") == 0;
}

static inline attr_t rd_a_bold(void) { return A_BOLD; }
static inline attr_t rd_a_dim(void) { return A_DIM; }
static inline attr_t rd_a_reverse(void) { return A_REVERSE; }
static inline attr_t rd_a_underline(void) { return A_UNDERLINE; }
static inline attr_t rd_a_italic(void) { return A_ITALIC; }
static inline attr_t rd_a_normal(void) { return A_NORMAL; }
static inline WINDOW *rd_stdscr(void) { return stdscr; }
static inline int rd_lines(void) { return LINES; }
static inline int rd_cols(void) { return COLS; }
static inline int rd_colors(void) { return COLORS; }
static inline int rd_color_pairs(void) { return COLOR_PAIRS; }
static inline int rd_key_code_yes(void) { return KEY_CODE_YES; }
static inline mmask_t rd_mouse_mask(void) { return BUTTON1_CLICKED | BUTTON1_PRESSED | BUTTON4_PRESSED | BUTTON5_PRESSED; }
static inline mmask_t rd_button1(void) { return BUTTON1_CLICKED | BUTTON1_PRESSED; }
static inline mmask_t rd_button4(void) { return BUTTON4_PRESSED; }
static inline mmask_t rd_button5(void) { return BUTTON5_PRESSED; }

/// Draws one grapheme (up to 5 wide characters) at the cursor with attributes and a colour pair.
static inline int rd_put_cell(int y, int x, const wchar_t *text, attr_t attrs, short pair) {
    cchar_t cell;
    if (setcchar(&cell, text, attrs, pair, NULL) != OK) return ERR;
    return mvwadd_wch(stdscr, y, x, &cell);
}

/// Unblocks the signals a test runner's worker thread may have blocked (resize and quit must arrive).
static inline void rd_unblock_signals(void) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGWINCH);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGTSTP);
    sigaddset(&set, SIGCONT);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
}

#endif
