/*
 * html_page.h - the fixed parts of an HTML report page (html_page.c).
 */
#ifndef PRISM_HTML_PAGE_H
#define PRISM_HTML_PAGE_H

extern const char html_css[];       /* the <style> element's text        */
extern const char html_script[];    /* the rendering script's text       */

#endif
