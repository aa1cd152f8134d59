/*  =========================================================================
    zpl - a ZPL reader that keeps line numbers

    Reads the subset of ZPL (rfc 4) that zconfig writes: one item per line,
    four spaces of indentation per level, "name" or "name = value", values
    bare or quoted with " or ', comments from "#" to the end of the line.
    =========================================================================
*/
#include "mapping.h"

//  Deepest nesting we accept; files deeper than this are not ours
#define ZPL_MAX_DEPTH 16

struct _zpl_t {
    char *name;                 //  Item name, "" for the root
    char *value;                //  Item value, NULL when absent
    size_t line;                //  Line number in the source text
    zpl_t *child;               //  First child
    zpl_t *last_child;          //  Last child, to append in file order
    zpl_t *next;                //  Next sibling
};

static zpl_t *
s_item_new (const char *name, size_t name_size, size_t line)
{
    zpl_t *self = (zpl_t *) calloc (1, sizeof (zpl_t));
    assert (self);
    self->name = strndup (name, name_size);
    assert (self->name);
    self->line = line;
    return self;
}

static void
s_append (zpl_t *parent, zpl_t *child)
{
    if (parent->last_child)
        parent->last_child->next = child;
    else
        parent->child = child;
    parent->last_child = child;
}

static bool
s_is_name_char (char c)
{
    return isalnum ((unsigned char) c) || strchr ("$-_@.&+/", c) != NULL;
}

//  Parse "= value" after a name.  Returns 0 and sets *value (fresh string)
//  or -1 with the reason.
static int
s_parse_value (const char **cursor_p, char **value, const char **reason)
{
    const char *cursor = *cursor_p;
    while (*cursor == ' ' || *cursor == '\t')
        cursor++;
    if (*cursor != '=') {
        *value = NULL;
        *cursor_p = cursor;
        return 0;
    }
    cursor++;
    while (*cursor == ' ' || *cursor == '\t')
        cursor++;
    if (*cursor == '"' || *cursor == '\'') {
        char quote = *cursor++;
        const char *end = strchr (cursor, quote);
        const char *eol = strchr (cursor, '\n');
        if (!end || (eol && end > eol)) {
            *reason = "unterminated quoted value";
            return -1;
        }
        *value = strndup (cursor, end - cursor);
        *cursor_p = end + 1;
        return 0;
    }
    const char *start = cursor;
    while (*cursor && !isspace ((unsigned char) *cursor) && *cursor != '#')
        cursor++;
    if (cursor == start) {
        *reason = "missing value after '='";
        return -1;
    }
    *value = strndup (start, cursor - start);
    *cursor_p = cursor;
    return 0;
}

//  Only blanks or a comment may follow an item on its line
static bool
s_rest_is_blank (const char *cursor)
{
    while (*cursor == ' ' || *cursor == '\t')
        cursor++;
    return *cursor == '\0' || *cursor == '\n' || *cursor == '#'
        || *cursor == '\r';
}

//  Parse one non-blank line into an item under the right parent.
//  Returns 0, or -1 with the reason.
static int
s_parse_line (const char *text, size_t line, zpl_t **stack, size_t *depth_p,
              const char **reason)
{
    size_t indent = 0;
    while (text [indent] == ' ')
        indent++;
    if (text [indent] == '\t') {
        *reason = "tabs are not allowed for indentation";
        return -1;
    }
    if (indent % 4) {
        *reason = "indentation must be a multiple of 4 spaces";
        return -1;
    }
    size_t depth = indent / 4;
    if (depth > *depth_p || depth >= ZPL_MAX_DEPTH) {
        *reason = "item is indented too deeply";
        return -1;
    }
    const char *cursor = text + indent;
    const char *name = cursor;
    while (s_is_name_char (*cursor))
        cursor++;
    if (cursor == name) {
        *reason = line == 1 && strncmp (name, "\xef\xbb\xbf", 3) == 0
                ? "the file begins with a UTF-8 byte order mark: remove it"
                : "expected a name";
        return -1;
    }
    size_t name_size = cursor - name;
    char *value = NULL;
    if (s_parse_value (&cursor, &value, reason))
        return -1;
    if (!s_rest_is_blank (cursor)) {
        free (value);
        *reason = "unexpected text after the item";
        return -1;
    }
    zpl_t *item = s_item_new (name, name_size, line);
    item->value = value;
    s_append (stack [depth], item);
    stack [depth + 1] = item;
    *depth_p = depth + 1;
    return 0;
}

//  --------------------------------------------------------------------------
//  Parse ZPL text into a tree

zpl_t *
zpl_parse (const char *text, char *error, size_t error_size)
{
    assert (text);
    zpl_t *root = s_item_new ("", 0, 0);
    zpl_t *stack [ZPL_MAX_DEPTH + 1] = { root };
    size_t depth = 0;           //  Deepest level a new item may take
    size_t line = 1;
    const char *cursor = text;
    while (*cursor) {
        const char *start = cursor;
        while (*start == ' ')
            start++;
        bool blank = *start == '\n' || *start == '\0' || *start == '#'
                  || *start == '\r';
        const char *reason = NULL;
        if (!blank && s_parse_line (cursor, line, stack, &depth, &reason)) {
            if (error)
                snprintf (error, error_size, "line %zu: %s", line, reason);
            zpl_destroy (&root);
            return NULL;
        }
        const char *eol = strchr (cursor, '\n');
        if (!eol)
            break;
        cursor = eol + 1;
        line++;
    }
    return root;
}

//  --------------------------------------------------------------------------
//  Read and parse a ZPL file

char *
zpl_read_file (const char *path, size_t limit, char *error, size_t error_size)
{
    assert (path);
    char none [1];
    if (!error) {
        error = none;
        error_size = sizeof none;
    }
    //  Opened without blocking, so that a FIFO nobody writes to reads as
    //  empty instead of hanging the tool in open
    int fd = open (path, O_RDONLY | O_NONBLOCK);
    struct stat status;
    if (fd < 0 || fstat (fd, &status) != 0) {
        snprintf (error, error_size, "%s: %s", path, strerror (errno));
        if (fd >= 0)
            close (fd);
        return NULL;
    }
    if (!S_ISREG (status.st_mode) && !S_ISFIFO (status.st_mode)) {
        snprintf (error, error_size, "%s: not a regular file", path);
        close (fd);
        return NULL;
    }
    fcntl (fd, F_SETFL, fcntl (fd, F_GETFL) & ~O_NONBLOCK);
    size_t size = 0, capacity = 4096;
    char *text = (char *) malloc (capacity);
    assert (text);
    ssize_t got = 0;
    while (size <= limit
       &&  (got = read (fd, text + size, capacity - size - 1)) != 0) {
        if (got < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        size += (size_t) got;
        if (size + 1 == capacity) {
            capacity *= 2;
            text = (char *) realloc (text, capacity);
            assert (text);
        }
    }
    int read_errno = got < 0 ? errno : 0;
    close (fd);
    text [size] = 0;
    if (read_errno)
        snprintf (error, error_size, "%s: %s", path, strerror (read_errno));
    else
    if (size > limit)
        snprintf (error, error_size, "%s: larger than %zu bytes: not a "
                  "text file of this kind", path, limit);
    else
    if (strlen (text) != size)
        snprintf (error, error_size, "%s: holds a NUL byte: not a text "
                  "file", path);
    else
        return text;
    free (text);
    return NULL;
}

zpl_t *
zpl_load (const char *path, char *error, size_t error_size)
{
    assert (path);
    char none [1];
    if (!error) {
        error = none;
        error_size = sizeof none;
    }
    char *text = zpl_read_file (path, ZPL_FILE_MAX, error, error_size);
    if (!text)
        return NULL;
    char reason [512] = "";
    zpl_t *tree = zpl_parse (text, reason, sizeof reason);
    free (text);
    if (!tree) {
        //  "line N: why" becomes "PATH:N: why", as compilers write it
        size_t line = 0;
        int consumed = 0;
        if (sscanf (reason, "line %zu: %n", &line, &consumed) == 1
        &&  consumed > 0)
            snprintf (error, error_size, "%s:%zu: %s", path, line,
                      reason + consumed);
        else
            snprintf (error, error_size, "%s: %s", path, reason);
    }
    return tree;
}

//  --------------------------------------------------------------------------
//  Destroy a tree

void
zpl_destroy (zpl_t **self_p)
{
    assert (self_p);
    zpl_t *self = *self_p;
    while (self) {
        zpl_t *next = self->next;
        zpl_destroy (&self->child);
        free (self->name);
        free (self->value);
        free (self);
        self = next;
    }
    *self_p = NULL;
}

const char *
zpl_name (zpl_t *self)
{
    assert (self);
    return self->name;
}

const char *
zpl_value (zpl_t *self)
{
    assert (self);
    return self->value;
}

size_t
zpl_line (zpl_t *self)
{
    assert (self);
    return self->line;
}

zpl_t *
zpl_child (zpl_t *self)
{
    assert (self);
    return self->child;
}

zpl_t *
zpl_next (zpl_t *self)
{
    assert (self);
    return self->next;
}

zpl_t *
zpl_locate (zpl_t *self, const char *name)
{
    assert (self);
    assert (name);
    for (zpl_t *child = self->child; child; child = child->next)
        if (streq (child->name, name))
            return child;
    return NULL;
}

//  --------------------------------------------------------------------------
//  Edit distance (Levenshtein) between a and b, stopping at limit + 1:
//  names are short, so one row of the table is enough.

static size_t
s_distance (const char *a, const char *b, size_t limit)
{
    size_t width = strlen (b);
    if (width > 255)
        return limit + 1;
    size_t row [256];
    for (size_t j = 0; j <= width; j++)
        row [j] = j;
    for (size_t i = 1; a [i - 1]; i++) {
        size_t diagonal = row [0];
        row [0] = i;
        size_t best = row [0];
        for (size_t j = 1; j <= width; j++) {
            size_t above = row [j];
            size_t cost = diagonal + (a [i - 1] != b [j - 1]);
            if (row [j] + 1 < cost)
                cost = row [j] + 1;
            if (row [j - 1] + 1 < cost)
                cost = row [j - 1] + 1;
            row [j] = cost;
            diagonal = above;
            if (cost < best)
                best = cost;
        }
        if (best > limit)
            return limit + 1;
    }
    return row [width];
}

const char *
zpl_nearest (const char *name, const char *const *known)
{
    assert (name && known);
    size_t limit = strlen (name) / 3;
    if (limit < 2)
        limit = 2;
    const char *nearest = NULL;
    size_t best = limit + 1;
    for (size_t index = 0; known [index]; index++) {
        size_t distance = s_distance (name, known [index], limit);
        if (distance < best) {
            best = distance;
            nearest = known [index];
        }
    }
    return nearest;
}
