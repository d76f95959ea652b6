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

#endif
