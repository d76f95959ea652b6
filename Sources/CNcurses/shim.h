#ifndef BGTOP_CNCURSES_SHIM_H
#define BGTOP_CNCURSES_SHIM_H

// Wide-character ncurses. _XOPEN_SOURCE_EXTENDED must come before the header for cchar_t and
// the *_wch calls.
#define _XOPEN_SOURCE_EXTENDED 1
#include <locale.h>
#include <ncursesw/ncurses.h>

// Swift 6 refuses mutable C globals and cannot import function-like macros: these accessors
// stand in for them.
static inline WINDOW *bg_stdscr(void) { return stdscr; }
static inline int bg_colors(void) { return COLORS; }
static inline int bg_color_pairs(void) { return COLOR_PAIRS; }
static inline int bg_lines(void) { return LINES; }
static inline int bg_cols(void) { return COLS; }
static inline attr_t bg_a_bold(void) { return A_BOLD; }
static inline attr_t bg_a_dim(void) { return A_DIM; }
static inline attr_t bg_a_reverse(void) { return A_REVERSE; }
static inline attr_t bg_a_underline(void) { return A_UNDERLINE; }
static inline attr_t bg_a_normal(void) { return A_NORMAL; }
static inline int bg_color_pair(int n) { return COLOR_PAIR(n); }
static inline void bg_getmaxyx(WINDOW *w, int *y, int *x) { int yy, xx; getmaxyx(w, yy, xx); *y = yy; *x = xx; }
static inline mmask_t bg_all_mouse_events(void) { return ALL_MOUSE_EVENTS | REPORT_MOUSE_POSITION; }
static inline mmask_t bg_button1_pressed(void) { return BUTTON1_PRESSED | BUTTON1_CLICKED; }
static inline mmask_t bg_button4_pressed(void) { return BUTTON4_PRESSED; }
#if NCURSES_MOUSE_VERSION > 1
static inline mmask_t bg_button5_pressed(void) { return BUTTON5_PRESSED; }
#else
static inline mmask_t bg_button5_pressed(void) { return 0; }
#endif

// Added for CursesTerminal.
#include <stdio.h>
#include <sys/ioctl.h>
#include <unistd.h>

// stdin/stdout are mutable C globals as far as Swift 6 is concerned; newterm() wants the FILEs.
static inline FILE *bg_stdin(void) { return stdin; }
static inline FILE *bg_stdout(void) { return stdout; }
// The kernel's idea of the terminal size (ioctl is variadic, which Swift cannot call).
// Returns 0 and fills rows/cols, or -1 when fd is not a terminal or reports 0x0.
static inline int bg_tty_size(int fd, int *rows, int *cols) {
    struct winsize ws;
    if (ioctl(fd, TIOCGWINSZ, &ws) != 0 || ws.ws_row == 0 || ws.ws_col == 0) return -1;
    *rows = ws.ws_row; *cols = ws.ws_col;
    return 0;
}
// Column width of a wide character in the current locale (glibc declares it only under _XOPEN_SOURCE).
extern int wcwidth(wchar_t);
static inline int bg_wcwidth(unsigned int c) { return wcwidth((wchar_t)c); }
// Alternate character set (line drawing) for locales that cannot show Unicode box characters:
// acs_map is a mutable global filled in by newterm(), NCURSES_ACS a macro.
static inline chtype bg_acs(unsigned char c) { return NCURSES_ACS(c); }
static inline attr_t bg_a_chartext(void) { return A_CHARTEXT; }
static inline attr_t bg_a_attributes(void) { return A_ATTRIBUTES; }
// Only the mouse events the dashboard uses. No REPORT_MOUSE_POSITION: with terminfo entries that
// enable motion tracking (xterm-1002/1003 style XM) it would wake the program on every mouse move.
static inline mmask_t bg_click_and_wheel_events(void) {
#if NCURSES_MOUSE_VERSION > 1
    return BUTTON1_PRESSED | BUTTON1_CLICKED | BUTTON4_PRESSED | BUTTON5_PRESSED;
#else
    return BUTTON1_PRESSED | BUTTON1_CLICKED | BUTTON4_PRESSED;
#endif
}
static inline mmask_t bg_report_mouse_position(void) { return REPORT_MOUSE_POSITION; }

#endif
