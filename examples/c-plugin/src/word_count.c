/*
 * word_count: a wai tool plugin in C, written from docs/ABI.md alone, with
 * no PDK and no JSON library — only the raw Extism imports (§2) and the
 * wai host functions (§4). It proves the ABI is language-neutral.
 *
 * One tool, word_count {"text": string}: counts the words of text itself,
 * asks the workspace's `wc -w` (wai_shell_exec) for a second opinion, logs
 * the call (wai_log), and answers both counts.
 *
 * Build (Debian: clang-14 lld-14 wasi-libc libclang-rt-14-dev-wasm32):
 *
 *   clang-14 --target=wasm32-wasi --sysroot=/usr -mexec-model=reactor \
 *       -O2 -fuse-ld=lld -o word_count.wasm src/word_count.c
 *
 * and grant it the shell: grants = ["shell"] under its [[plugins]] entry.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define IMPORT(mod, name) __attribute__((import_module(mod), import_name(name)))
#define EXPORT(name) __attribute__((export_name(name)))

IMPORT("extism:host/env", "alloc") uint64_t ex_alloc(uint64_t n);
IMPORT("extism:host/env", "free") void ex_free(uint64_t off);
IMPORT("extism:host/env", "length") uint64_t ex_length(uint64_t off);
IMPORT("extism:host/env", "store_u8") void ex_store_u8(uint64_t off, uint8_t v);
IMPORT("extism:host/env", "load_u8") uint8_t ex_load_u8(uint64_t off);
IMPORT("extism:host/env", "input_length") uint64_t ex_input_length(void);
IMPORT("extism:host/env", "input_load_u8") uint8_t ex_input_load_u8(uint64_t i);
IMPORT("extism:host/env", "output_set") void ex_output_set(uint64_t off, uint64_t n);
IMPORT("extism:host/user", "wai_log") uint64_t wai_log(uint64_t req);
IMPORT("extism:host/user", "wai_shell_exec") uint64_t wai_shell_exec(uint64_t req);

/* A growable byte buffer in the plugin's own memory. */
typedef struct {
    char *p;
    size_t n, cap;
} buf;

static void put_bytes(buf *b, const char *s, size_t n) {
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + n + 1) cap *= 2;
        b->p = realloc(b->p, cap);
        if (!b->p) abort(); /* a trap: the host reports it and drops the instance */
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = 0;
}

static void put_str(buf *b, const char *s) { put_bytes(b, s, strlen(s)); }

static void put_uint(buf *b, unsigned long v) {
    char tmp[24];
    int i = sizeof tmp;
    tmp[--i] = 0;
    do {
        tmp[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    put_str(b, tmp + i);
}

/* put_json_string writes s as a JSON string literal. s is valid UTF-8 (it
 * came out of JSON), so only quotes, backslashes and controls need escapes. */
static void put_json_string(buf *b, const char *s, size_t n) {
    static const char hex[] = "0123456789abcdef";
    put_str(b, "\"");
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            char e[2] = {'\\', (char)c};
            put_bytes(b, e, 2);
        } else if (c < 0x20) {
            char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            put_bytes(b, e, 6);
        } else {
            put_bytes(b, (const char *)&c, 1);
        }
    }
    put_str(b, "\"");
}

/* Kernel memory <-> plugin memory. */
static uint64_t to_kernel(const char *s, size_t n) {
    uint64_t off = ex_alloc(n);
    for (size_t i = 0; i < n; i++) ex_store_u8(off + i, (uint8_t)s[i]);
    return off;
}

static char *from_kernel(uint64_t off, size_t *n) {
    *n = (size_t)ex_length(off);
    char *s = malloc(*n + 1);
    if (!s) abort();
    for (size_t i = 0; i < *n; i++) s[i] = (char)ex_load_u8(off + i);
    s[*n] = 0;
    return s;
}

static int32_t answer(const buf *b) {
    ex_output_set(to_kernel(b->p, b->n), b->n);
    return 0;
}

static void put_utf8(buf *b, unsigned cp) {
    char u[4];
    if (cp < 0x80) {
        u[0] = (char)cp;
        put_bytes(b, u, 1);
    } else if (cp < 0x800) {
        u[0] = (char)(0xc0 | cp >> 6), u[1] = (char)(0x80 | (cp & 0x3f));
        put_bytes(b, u, 2);
    } else if (cp < 0x10000) {
        u[0] = (char)(0xe0 | cp >> 12), u[1] = (char)(0x80 | (cp >> 6 & 0x3f)), u[2] = (char)(0x80 | (cp & 0x3f));
        put_bytes(b, u, 3);
    } else {
        u[0] = (char)(0xf0 | cp >> 18), u[1] = (char)(0x80 | (cp >> 12 & 0x3f));
        u[2] = (char)(0x80 | (cp >> 6 & 0x3f)), u[3] = (char)(0x80 | (cp & 0x3f));
        put_bytes(b, u, 4);
    }
}

static int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static long hex4(const char *p) {
    long v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hexval(p[i]);
        if (h < 0) return -1;
        v = v * 16 + h;
    }
    return v;
}

/* decode_string decodes the JSON string literal starting at p (just after
 * its opening quote) into out; it returns 0 on success. */
static int decode_string(const char *p, const char *end, buf *out) {
    put_bytes(out, "", 0);
    while (p < end && *p != '"') {
        if (*p != '\\') {
            put_bytes(out, p++, 1);
            continue;
        }
        if (++p >= end) return -1;
        char c = *p++;
        switch (c) {
        case '"': case '\\': case '/': put_bytes(out, &c, 1); break;
        case 'b': put_str(out, "\b"); break;
        case 'f': put_str(out, "\f"); break;
        case 'n': put_str(out, "\n"); break;
        case 'r': put_str(out, "\r"); break;
        case 't': put_str(out, "\t"); break;
        case 'u': {
            if (end - p < 4) return -1;
            long cp = hex4(p);
            p += 4;
            if (cp < 0) return -1;
            if (cp >= 0xd800 && cp < 0xdc00 && end - p >= 6 && p[0] == '\\' && p[1] == 'u') {
                long lo = hex4(p + 2);
                if (lo >= 0xdc00 && lo < 0xe000) {
                    cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                    p += 6;
                }
            }
            put_utf8(out, (unsigned)cp);
            break;
        }
        default: return -1;
        }
    }
    return p < end ? 0 : -1;
}

static const char *skip_space(const char *p) {
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
    return p;
}

/* find_value returns where the value of "key" starts in json, searching
 * from `from`, or NULL. Not a JSON parser: it is enough here because the
 * keys looked up come before any string value that could contain them —
 * "params" precedes the caller's strings in the call input (its first
 * string value is the tool's name), params holds only "text" (the schema
 * says so and the host validates it), and the exec result's strings are
 * wc's argv, its numeric output and an empty stderr. */
static const char *find_value(const char *from, const char *key) {
    size_t k = strlen(key);
    for (const char *p = strstr(from, "\""); p; p = strstr(p + 1, "\"")) {
        if (strncmp(p + 1, key, k) != 0 || p[1 + k] != '"') continue;
        const char *q = skip_space(p + 2 + k);
        if (*q == ':') return skip_space(q + 1);
    }
    return NULL;
}

static int32_t fail(const char *kind, const char *message) {
    buf b = {0};
    put_str(&b, "{\"error\":{\"kind\":\"");
    put_str(&b, kind);
    put_str(&b, "\",\"message\":");
    put_json_string(&b, message, strlen(message));
    put_str(&b, "}}");
    return answer(&b);
}

static unsigned long count_words(const char *s, size_t n) {
    unsigned long words = 0;
    int in = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        int space = c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
        if (!space && !in) words++;
        in = !space;
    }
    return words;
}

EXPORT("wai_describe") int32_t wai_describe(void) {
    static const char desc[] =
        "{\"abi\":1,\"name\":\"word_count\",\"version\":\"1.0.0\",\"kind\":\"tool\","
        "\"capabilities\":[\"shell\"],"
        "\"tools\":[{\"name\":\"word_count\","
        "\"description\":\"Counts the words of a text, and has the workspace's wc -w count them too.\","
        "\"input_schema\":{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\",\"maxLength\":48000}},"
        "\"required\":[\"text\"],\"additionalProperties\":false},"
        "\"annotations\":{\"title\":\"Word count\",\"read_only_hint\":true,\"open_world_hint\":false}}]}";
    buf b = {0};
    put_bytes(&b, desc, sizeof desc - 1);
    return answer(&b);
}

EXPORT("wai_call") int32_t wai_call(void) {
    size_t n = (size_t)ex_input_length();
    char *in = malloc(n + 1);
    if (!in) abort();
    for (size_t i = 0; i < n; i++) in[i] = (char)ex_input_load_u8(i);
    in[n] = 0;

    /* params were validated against the schema: {"text": string} only. */
    const char *params = find_value(in, "params");
    const char *v = params ? find_value(params, "text") : NULL;
    buf text = {0};
    if (!v || *v != '"' || decode_string(v + 1, in + n, &text) != 0)
        return fail("invalid", "params.text is missing or not a JSON string");
    unsigned long mine = count_words(text.p, text.n);

    buf req = {0};
    put_str(&req, "{\"level\":\"info\",\"message\":\"word_count called\",\"attrs\":{\"bytes\":");
    put_uint(&req, (unsigned long)text.n);
    put_str(&req, "}}");
    uint64_t off = to_kernel(req.p, req.n);
    uint64_t resp = wai_log(off);
    ex_free(off);
    if (resp) ex_free(resp);

    req.n = 0;
    put_str(&req, "{\"argv\":[\"wc\",\"-w\"],\"stdin\":");
    put_json_string(&req, text.p, text.n);
    put_str(&req, "}");
    off = to_kernel(req.p, req.n);
    resp = wai_shell_exec(off);
    ex_free(off);
    if (!resp) return fail("internal", "wai_shell_exec answered no block");
    size_t rn;
    char *r = from_kernel(resp, &rn);
    ex_free(resp);

    buf out = {0};
    if (strncmp(r, "{\"error\":", 9) == 0) {
        /* Pass the host's error on: its kind (a policy's "permission")
         * reaches the caller unchanged. */
        put_bytes(&out, r, rn);
        return answer(&out);
    }
    const char *code = find_value(r, "exit_code");
    const char *so = find_value(r, "stdout");
    buf stdout_text = {0};
    if (!code || !so || *so != '"' || decode_string(so + 1, r + rn, &stdout_text) != 0)
        return fail("internal", "wai_shell_exec answered an exec result without exit_code or stdout");
    long exit_code = strtol(code, NULL, 10);
    unsigned long theirs = strtoul(stdout_text.p, NULL, 10);

    put_str(&out, "{\"ok\":");
    put_str(&out, exit_code == 0 && theirs == mine ? "true" : "false");
    put_str(&out, ",\"message\":\"");
    put_uint(&out, mine);
    put_str(&out, mine == 1 ? " word" : " words");
    if (exit_code != 0) put_str(&out, " (wc -w failed)");
    else if (theirs != mine) put_str(&out, " (wc -w disagrees)");
    put_str(&out, "\",\"value\":{\"words\":");
    put_uint(&out, mine);
    put_str(&out, ",\"wc_words\":");
    put_uint(&out, theirs);
    put_str(&out, ",\"wc_exit_code\":");
    put_uint(&out, exit_code < 0 ? 0 : (unsigned long)exit_code);
    put_str(&out, "}}");
    return answer(&out);
}
