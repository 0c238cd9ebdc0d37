/*
** test_image_io.c — the image I/O layer: every writer and reader round-trips,
** hand-made PNM files and hand-built PNGs decode to hand-computed values, and
** bad input fails cleanly with the right status, leaving no files behind.
**
** Exit status 0 means every check passed; each failed check is printed with
** its line and the library's last error message.
*/
#ifndef _XOPEN_SOURCE
#define _XOPEN_SOURCE 700
#endif
#include <dirent.h>
#include <math.h>
#include <png.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include "runtime/image.h"
#include "runtime/util.h"

static int checks;
static int failures;

static int check(int ok, const char *what, int line)
{
    checks++;
    if (!ok) {
        failures++;
        fprintf(stderr, "test_image_io.c:%d: failed: %s (last error: \"%s\")\n", line, what,
                db_error_message());
    }
    return ok;
}

/* Evaluates to the condition, so a test can stop when a later step needs it. */
#define CHECK(cond) check((cond) != 0, #cond, __LINE__)

static char temp_dir[] = "/tmp/test_image_io-XXXXXX";

/* Writes the full path of `name` inside the temporary directory to `out`. */
static const char *path_of(char *out, size_t size, const char *name)
{
    snprintf(out, size, "%s/%s", temp_dir, name);
    return out;
}

static int write_file(const char *name, const void *bytes, size_t size)
{
    char path[512];
    FILE *f = fopen(path_of(path, sizeof path, name), "wb");
    if (!f)
        return 0;
    int ok = fwrite(bytes, 1, size, f) == size;
    return fclose(f) == 0 && ok;
}

/* The whole content of a file, or NULL; *size receives its length. */
static uint8_t *read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    uint8_t *bytes = NULL;
    size_t used = 0, capacity = 0;
    for (;;) {
        if (used == capacity) {
            capacity = capacity ? capacity * 2 : 4096;
            uint8_t *grown = realloc(bytes, capacity);
            if (!grown) {
                free(bytes);
                fclose(f);
                return NULL;
            }
            bytes = grown;
        }
        size_t n = fread(bytes + used, 1, capacity - used, f);
        if (n == 0)
            break;
        used += n;
    }
    fclose(f);
    *size = used;
    return bytes;
}

static int file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Counts the writer's temporary files (".docbin-*") left in a directory. */
static int temp_files_in(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int count = 0;
    struct dirent *entry;
    while ((entry = readdir(d)) != NULL)
        if (strncmp(entry->d_name, ".docbin-", 8) == 0)
            count++;
    closedir(d);
    return count;
}

/* Removes the temporary directory and everything in it (one level of
** subdirectories, which is all the tests create). */
static void remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *entry;
    while ((entry = readdir(d)) != NULL) {
        if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0)
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, entry->d_name);
        struct stat st;
        if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
            remove_tree(path);
        else
            unlink(path);
    }
    closedir(d);
    rmdir(dir);
}

static db_image *make_gray(int width, int height)
{
    db_image *img = db_image_new(width, height, 1);
    if (img)
        for (int y = 0; y < height; y++)
            for (int x = 0; x < width; x++)
                img->data[(size_t)y * img->stride + x] = (uint8_t)(x * 7 + y * 13);
    return img;
}

static db_image *make_rgb(int width, int height)
{
    db_image *img = db_image_new(width, height, 3);
    if (img)
        for (int y = 0; y < height; y++)
            for (int x = 0; x < width; x++) {
                uint8_t *p = img->data + (size_t)y * img->stride + (size_t)x * 3;
                p[0] = (uint8_t)(x * 5 + y);
                p[1] = (uint8_t)(y * 11 + 3);
                p[2] = (uint8_t)(x * y + 100);
            }
    return img;
}

/* Whether `img` has the given shape and pixels (rows of width*channels bytes
** in `expected`); prints the first difference. */
static int pixels_are(const db_image *img, int width, int height, int channels,
                      const uint8_t *expected)
{
    if (!img)
        return 0;
    if (img->width != width || img->height != height || img->channels != channels) {
        fprintf(stderr, "  got %dx%dx%d, expected %dx%dx%d\n", img->width, img->height,
                img->channels, width, height, channels);
        return 0;
    }
    size_t row_bytes = (size_t)width * (size_t)channels;
    for (int y = 0; y < height; y++)
        for (size_t i = 0; i < row_bytes; i++) {
            uint8_t got = img->data[(size_t)y * img->stride + i];
            uint8_t want = expected[(size_t)y * row_bytes + i];
            if (got != want) {
                fprintf(stderr, "  row %d byte %zu: got %u, expected %u\n", y, i, got, want);
                return 0;
            }
        }
    return 1;
}

/* Whether two images have the same shape and pixels (strides may differ). */
static int same_image(const db_image *a, const db_image *b)
{
    if (!a || !b)
        return 0;
    uint8_t *packed = malloc((size_t)b->width * (size_t)b->height * (size_t)b->channels);
    if (!packed)
        return 0;
    size_t row_bytes = (size_t)b->width * (size_t)b->channels;
    for (int y = 0; y < b->height; y++)
        memcpy(packed + (size_t)y * row_bytes, b->data + (size_t)y * b->stride, row_bytes);
    int same = pixels_are(a, b->width, b->height, b->channels, packed);
    free(packed);
    return same;
}

/* `img` thresholded as the 1-bit writers do: white iff value >= 128. */
static db_image *thresholded(const db_image *img)
{
    db_image *out = db_image_new(img->width, img->height, 1);
    if (out)
        for (int y = 0; y < img->height; y++)
            for (int x = 0; x < img->width; x++)
                out->data[(size_t)y * out->stride + x] =
                    img->data[(size_t)y * img->stride + x] >= 128 ? 255 : 0;
    return out;
}

/* Reads `bytes` from memory and checks that it fails with `status`. */
static int fails_with(const void *bytes, size_t size, db_status status)
{
    db_error_clear();
    db_image *img = db_image_read_memory(bytes, size, "bad.img");
    if (img) {
        fprintf(stderr, "  unexpectedly decoded a %dx%d image\n", img->width, img->height);
        db_image_free(img);
        return 0;
    }
    if (db_error_status() != status || strstr(db_error_message(), "bad.img") == NULL) {
        fprintf(stderr, "  status %d, expected %d; message \"%s\"\n", (int)db_error_status(),
                (int)status, db_error_message());
        return 0;
    }
    return 1;
}

/* A PNM given as a string (binary parts escaped), read from memory. */
static db_image *pnm(const char *text, size_t size)
{
    return db_image_read_memory((const uint8_t *)text, size, "test.pnm");
}

#define PNM(literal) pnm(literal, sizeof literal - 1)
#define FAILS(literal, status) fails_with(literal, sizeof literal - 1, status)

/* ---- PNG files built in memory with libpng ---- */

/* A PNG to build: rows hold the file's samples exactly (packed below 8 bits,
** big-endian at 16). */
struct png_spec {
    int width, height, color_type, bit_depth, interlaced;
    const uint8_t *rows;
    const png_color *palette;
    int palette_size;
    const uint8_t *trans_alpha;      /* palette transparency */
    int trans_count;
    const png_color_16 *trans_color; /* gray or RGB transparency */
};

struct buffer {
    uint8_t *data;
    size_t size, capacity;
};

static void buffer_write(png_structp png, png_bytep data, png_size_t n)
{
    struct buffer *b = png_get_io_ptr(png);
    if (b->size + n > b->capacity) {
        size_t capacity = (b->size + n) * 2;
        uint8_t *grown = realloc(b->data, capacity);
        if (!grown)
            png_error(png, "out of memory");
        b->data = grown;
        b->capacity = capacity;
    }
    memcpy(b->data + b->size, data, n);
    b->size += n;
}

static void buffer_flush(png_structp png)
{
    (void)png;
}

static int samples_per_pixel(int color_type)
{
    switch (color_type) {
    case PNG_COLOR_TYPE_GRAY_ALPHA: return 2;
    case PNG_COLOR_TYPE_RGB: return 3;
    case PNG_COLOR_TYPE_RGB_ALPHA: return 4;
    default: return 1;
    }
}

/* Encodes `spec` as a PNG; the caller frees the result. */
static uint8_t *build_png(const struct png_spec *spec, size_t *size)
{
    size_t row_bytes = ((size_t)spec->width * (size_t)samples_per_pixel(spec->color_type)
                        * (size_t)spec->bit_depth + 7) / 8;
    png_bytep *rows = malloc(sizeof *rows * (size_t)spec->height);
    struct buffer *out = calloc(1, sizeof *out);
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!rows || !out || !info) {
        png_destroy_write_struct(&png, &info);
        free(rows);
        free(out);
        return NULL;
    }
    for (int y = 0; y < spec->height; y++)
        rows[y] = (png_bytep)spec->rows + (size_t)y * row_bytes;
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        free(rows);
        free(out->data);
        free(out);
        return NULL;
    }
    png_set_write_fn(png, out, buffer_write, buffer_flush);
    png_set_IHDR(png, info, (png_uint_32)spec->width, (png_uint_32)spec->height,
                 spec->bit_depth, spec->color_type,
                 spec->interlaced ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    if (spec->palette)
        png_set_PLTE(png, info, spec->palette, spec->palette_size);
    if (spec->trans_alpha || spec->trans_color)
        png_set_tRNS(png, info, spec->trans_alpha, spec->trans_count, spec->trans_color);
    png_write_info(png, info);
    png_write_image(png, rows);
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    free(rows);
    uint8_t *bytes = out->data;
    *size = out->size;
    free(out);
    return bytes;
}

/* Decodes a built PNG from memory. */
static db_image *decode_png(const struct png_spec *spec)
{
    size_t size = 0;
    uint8_t *bytes = build_png(spec, &size);
    if (!CHECK(bytes != NULL))
        return NULL;
    db_image *img = db_image_read_memory(bytes, size, "built.png");
    free(bytes);
    return img;
}

static uint32_t crc32_of(const uint8_t *bytes, size_t size)
{
    uint32_t crc = 0xffffffffu;
    for (size_t i = 0; i < size; i++) {
        crc ^= bytes[i];
        for (int k = 0; k < 8; k++)
            crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
    }
    return crc ^ 0xffffffffu;
}

static uint32_t get_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* Offset of the first chunk of `type` (its length field), or 0 if none. */
static size_t find_chunk(const uint8_t *png, size_t size, const char *type)
{
    size_t pos = 8;
    while (pos + 12 <= size) {
        uint32_t length = get_be32(png + pos);
        if (memcmp(png + pos + 4, type, 4) == 0)
            return pos;
        pos += 12 + (size_t)length;
    }
    return 0;
}

/* Recomputes the CRC of the chunk at `pos` after its data was changed. */
static void fix_crc(uint8_t *png, size_t pos)
{
    uint32_t length = get_be32(png + pos);
    put_be32(png + pos + 8 + length, crc32_of(png + pos + 4, 4 + (size_t)length));
}

/* A PNG holding only IHDR (with the given size), a stub IDAT and IEND: enough
** for the reader to see the declared size. */
static size_t png_header_only(uint8_t *out, uint32_t width, uint32_t height, int color_type)
{
    static const uint8_t signature[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
    size_t pos = 0;
    memcpy(out, signature, 8);
    pos = 8;
    put_be32(out + pos, 13);
    memcpy(out + pos + 4, "IHDR", 4);
    put_be32(out + pos + 8, width);
    put_be32(out + pos + 12, height);
    out[pos + 16] = 8;
    out[pos + 17] = (uint8_t)color_type;
    out[pos + 18] = out[pos + 19] = out[pos + 20] = 0;
    fix_crc(out, pos);
    pos += 25;
    put_be32(out + pos, 2);
    memcpy(out + pos + 4, "IDAT", 4);
    out[pos + 8] = 0x78;
    out[pos + 9] = 0x9c;
    fix_crc(out, pos);
    pos += 14;
    put_be32(out + pos, 0);
    memcpy(out + pos + 4, "IEND", 4);
    fix_crc(out, pos);
    return pos + 12;
}

/* db_image_peek against the decode itself: every PNG colour type (with a
** palette and with transparency), bit depths 1 to 16 and interlacing, and
** every PNM kind with comments in its header; then what it refuses. */
static void test_peek(void)
{
    static uint8_t rows[4 * 3 * 8 * 2], indices[16];
    for (size_t i = 0; i < sizeof rows; i++)
        rows[i] = (uint8_t)(i * 37);
    for (size_t i = 0; i < sizeof indices; i++)
        indices[i] = (uint8_t)(i % 4);
    static const png_color palette[4] = {{0, 0, 0}, {255, 255, 255}, {10, 20, 30}, {90, 90, 90}};
    static const uint8_t trans_alpha[2] = {0, 128};
    static const png_color_16 trans_gray = {.gray = 3};
    const struct png_spec specs[] = {
        {.width = 5, .height = 3, .color_type = PNG_COLOR_TYPE_GRAY, .bit_depth = 8, .rows = rows},
        {.width = 7, .height = 2, .color_type = PNG_COLOR_TYPE_GRAY, .bit_depth = 1, .rows = rows},
        {.width = 3, .height = 4, .color_type = PNG_COLOR_TYPE_GRAY, .bit_depth = 16, .rows = rows,
         .interlaced = 1},
        {.width = 4, .height = 3, .color_type = PNG_COLOR_TYPE_GRAY, .bit_depth = 8, .rows = rows,
         .trans_color = &trans_gray},
        {.width = 4, .height = 2, .color_type = PNG_COLOR_TYPE_GRAY_ALPHA, .bit_depth = 8, .rows = rows},
        {.width = 3, .height = 3, .color_type = PNG_COLOR_TYPE_RGB, .bit_depth = 8, .rows = rows},
        {.width = 2, .height = 5, .color_type = PNG_COLOR_TYPE_RGB_ALPHA, .bit_depth = 16, .rows = rows},
        {.width = 6, .height = 2, .color_type = PNG_COLOR_TYPE_PALETTE, .bit_depth = 2, .rows = rows,
         .palette = palette, .palette_size = 4},
        {.width = 6, .height = 2, .color_type = PNG_COLOR_TYPE_PALETTE, .bit_depth = 8, .rows = indices,
         .palette = palette, .palette_size = 4, .trans_alpha = trans_alpha, .trans_count = 2},
    };
    char path[512];
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        size_t size = 0;
        uint8_t *bytes = build_png(&specs[i], &size);
        char name[32];
        snprintf(name, sizeof name, "peek%zu.png", i);
        if (!CHECK(bytes && write_file(name, bytes, size))) {
            free(bytes);
            continue;
        }
        free(bytes);
        int w = 0, h = 0, c = 0;
        db_image *img = db_image_read(path_of(path, sizeof path, name));
        if (CHECK(img) && CHECK(db_image_peek(path, &w, &h, &c) == DB_OK))
            CHECK(w == img->width && h == img->height && c == img->channels);
        db_image_free(img);
    }
#define PNM_FILE(literal) {literal, sizeof literal - 1}
    static const struct {
        const char *text;
        size_t size;
    } pnms[] = {
        PNM_FILE("P1\n# a comment\n3 2\n1 0 1\n0 1 0\n"),
        PNM_FILE("P2 4 1 # comment\n255\n0 1 2 3\n"),
        PNM_FILE("P3\n2 1\n65535\n0 0 0 65535 65535 65535\n"),
        PNM_FILE("P4\n9 2\n\xff\x80\x00\x00"),
        PNM_FILE("P5 3 2 255\n\x01\x02\x03\x04\x05\x06"),
        PNM_FILE("P6\n#c\n1 2\n255\n\x01\x02\x03\x04\x05\x06"),
    };
#undef PNM_FILE
    for (size_t i = 0; i < sizeof pnms / sizeof pnms[0]; i++) {
        char name[32];
        snprintf(name, sizeof name, "peek%zu.pnm", i);
        if (!CHECK(write_file(name, pnms[i].text, pnms[i].size)))
            continue;
        int w = 0, h = 0, c = 0;
        db_image *img = db_image_read(path_of(path, sizeof path, name));
        if (CHECK(img) && CHECK(db_image_peek(path, &w, &h, &c) == DB_OK))
            CHECK(w == img->width && h == img->height && c == img->channels);
        db_image_free(img);
    }

    /* A header past the bytes peeked: the decode reads it, the peek cannot. */
    size_t long_size = DB_IMAGE_PEEK_BYTES + 64;
    char *long_header = malloc(long_size);
    if (CHECK(long_header)) {
        memset(long_header, ' ', long_size);
        memcpy(long_header, "P5\n#", 4);
        long_header[long_size - 20] = '\n';
        memcpy(long_header + long_size - 19, "2 1 255\n\x07\x08", 10);
        CHECK(write_file("longcomment.pgm", long_header, long_size - 9));
        int w, h, c;
        db_image *img = db_image_read(path_of(path, sizeof path, "longcomment.pgm"));
        CHECK(img && img->width == 2 && img->height == 1);
        db_image_free(img);
        CHECK(db_image_peek(path, &w, &h, &c) == DB_ERR_FORMAT && strstr(db_error_message(), path));
        free(long_header);
    }

    /* A P4 header whose height is cut by the end of the bytes peeked ("3000" read
    ** as "30"): the peek fails rather than report the smaller page. */
    size_t cut_size = DB_IMAGE_PEEK_BYTES + 6000 + 8;
    char *cut = malloc(cut_size);
    if (CHECK(cut)) {
        memset(cut, 0, cut_size);
        memset(cut, ' ', DB_IMAGE_PEEK_BYTES);
        memcpy(cut, "P4\n#", 4);
        memcpy(cut + DB_IMAGE_PEEK_BYTES - 6, "\n16 30", 6);
        memcpy(cut + DB_IMAGE_PEEK_BYTES, "00\n", 3);
        CHECK(write_file("cut.pbm", cut, DB_IMAGE_PEEK_BYTES + 3 + 6000));
        db_image *img = db_image_read(path_of(path, sizeof path, "cut.pbm"));
        CHECK(img && img->width == 16 && img->height == 3000);
        db_image_free(img);
        int w, h, c;
        CHECK(db_image_peek(path, &w, &h, &c) == DB_ERR_FORMAT && strstr(db_error_message(), path));
        free(cut);
    }

    /* A FIFO: never read (its bytes would be gone for the decode), and opening
    ** one without a writer does not wait. */
    if (CHECK(mkfifo(path_of(path, sizeof path, "fifo.png"), 0600) == 0)) {
        int w, h, c;
        CHECK(db_image_peek(path, &w, &h, &c) == DB_ERR_IO && strstr(db_error_message(), "regular file"));
        unlink(path);
    }

    /* What the peek refuses, naming the file: no such file, a foreign format, a PNG
    ** cut inside IHDR, sides past the limit. */
    int w, h, c;
    CHECK(db_image_peek(path_of(path, sizeof path, "missing.png"), &w, &h, &c) == DB_ERR_IO
          && strstr(db_error_message(), path));
    CHECK(write_file("peek.gif", "GIF89a\x01\x00\x01\x00", 10));
    CHECK(db_image_peek(path_of(path, sizeof path, "peek.gif"), &w, &h, &c) == DB_ERR_FORMAT
          && strstr(db_error_message(), path));
    uint8_t header[64];
    size_t n = png_header_only(header, 5, 5, PNG_COLOR_TYPE_RGB);
    CHECK(n > 25 && write_file("cut.png", header, 25));
    CHECK(db_image_peek(path_of(path, sizeof path, "cut.png"), &w, &h, &c) == DB_ERR_FORMAT
          && strstr(db_error_message(), path));
    n = png_header_only(header, DB_IMAGE_MAX_SIDE + 1, 5, PNG_COLOR_TYPE_GRAY);
    CHECK(write_file("wide.png", header, n));
    CHECK(db_image_peek(path_of(path, sizeof path, "wide.png"), &w, &h, &c) != DB_OK
          && strstr(db_error_message(), path));
}

/* ---- the tests ---- */

static void test_check_size(void)
{
    CHECK(db_image_check_size(10, 10, 1, "t") == DB_OK);
    CHECK(db_image_check_size(DB_IMAGE_MAX_SIDE, 1, 3, "t") == DB_OK);
    CHECK(db_image_check_size(0, 0, 1, "t.png") == DB_ERR_FORMAT
          && strstr(db_error_message(), "t.png: 0x0") != NULL);
    CHECK(db_image_check_size(-1, 5, 1, "t") == DB_ERR_FORMAT);
    CHECK(db_image_check_size(DB_IMAGE_MAX_SIDE + 1LL, 1, 1, "t") == DB_ERR_FORMAT);
    CHECK(db_image_check_size(1000000, 1000000, 1, "big.pgm") == DB_ERR_NOMEM
          && strstr(db_error_message(), "big.pgm: 1000000x1000000") != NULL);
    CHECK(db_image_check_size(10, 10, 0, "t") == DB_ERR_USAGE);
    CHECK(db_image_new(0, 5, 1) == NULL && db_error_status() == DB_ERR_FORMAT);
    CHECK(db_image_new(5, 5, 2) == NULL && db_error_status() == DB_ERR_USAGE);
    db_image *img = db_image_new(3, 2, 3);
    if (CHECK(img != NULL)) {
        CHECK(img->stride == 9 && img->data[0] == 0 && img->data[17] == 0);
        db_image_free(img);
    }
    db_image_free(NULL);
}

/* Writes `img` under `name`, reads it back and compares with `expected`. */
static void round_trip(const db_image *img, const char *name, db_file_format format, int bits,
                       const db_image *expected)
{
    char path[512];
    path_of(path, sizeof path, name);
    db_error_clear();
    if (!CHECK(db_image_write(img, path, format, bits) == DB_OK)) {
        fprintf(stderr, "  writing %s\n", name);
        return;
    }
    db_image *back = db_image_read(path);
    if (!CHECK(same_image(back, expected)))
        fprintf(stderr, "  reading back %s\n", name);
    db_image_free(back);
}

/* The first bytes of a written file. */
static int file_starts_with(const char *name, const void *prefix, size_t length)
{
    char path[512];
    size_t size = 0;
    uint8_t *bytes = read_file(path_of(path, sizeof path, name), &size);
    int ok = bytes && size >= length && memcmp(bytes, prefix, length) == 0;
    free(bytes);
    return ok;
}

static void test_round_trips(void)
{
    db_image *gray = make_gray(37, 23);
    db_image *rgb = make_rgb(19, 11);
    db_image *binary = gray ? thresholded(gray) : NULL;
    if (!CHECK(gray && rgb && binary))
        goto done;

    round_trip(gray, "gray8.png", DB_FILE_AUTO, 8, gray);
    round_trip(gray, "gray1.png", DB_FILE_AUTO, 1, binary);
    round_trip(rgb, "rgb.png", DB_FILE_AUTO, 8, rgb);
    round_trip(gray, "gray.pgm", DB_FILE_AUTO, 8, gray);
    round_trip(gray, "gray.pbm", DB_FILE_AUTO, 1, binary);
    round_trip(rgb, "rgb.ppm", DB_FILE_AUTO, 8, rgb);
    round_trip(gray, "gray8.pnm", DB_FILE_AUTO, 8, gray);
    round_trip(gray, "gray1.pnm", DB_FILE_AUTO, 1, binary);
    round_trip(rgb, "rgb.pnm", DB_FILE_AUTO, 8, rgb);
    round_trip(gray, "UPPER.PNG", DB_FILE_AUTO, 8, gray);
    round_trip(gray, "explicit.dat", DB_FILE_PNG, 1, binary);
    round_trip(rgb, "explicit2.dat", DB_FILE_PNM, 8, rgb);

    /* 1-bit PNG: IHDR says bit depth 1, gray (bytes 24 and 25). */
    static const uint8_t png_1bit_prefix[26] = {
        0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13, 'I', 'H', 'D', 'R',
        0, 0, 0, 37, 0, 0, 0, 23, 1, 0 };
    CHECK(file_starts_with("gray1.png", png_1bit_prefix, sizeof png_1bit_prefix));
    CHECK(file_starts_with("gray8.png", png_1bit_prefix, 24));
    CHECK(file_starts_with("gray.pbm", "P4\n37 23\n", 9));
    CHECK(file_starts_with("gray1.pnm", "P4\n37 23\n", 9));
    CHECK(file_starts_with("gray.pgm", "P5\n37 23\n255\n", 13));
    CHECK(file_starts_with("rgb.ppm", "P6\n19 11\n255\n", 13));
    CHECK(file_starts_with("explicit.dat", "\x89PNG", 4));
    char path[512];
    struct stat st;
    /* P4 rows are padded to whole bytes: 5 bytes per 37-pixel row. */
    CHECK(stat(path_of(path, sizeof path, "gray.pbm"), &st) == 0 && st.st_size == 9 + 5 * 23);
    /* Output files get the usual permissions, not mkstemp's 0600 (umask is 022). */
    CHECK(stat(path_of(path, sizeof path, "gray8.png"), &st) == 0
          && (st.st_mode & 0777) == 0644);

    /* A P4 row packs black as 1: pixels 0, 255, 100, 128 → bits 1 0 1 0. */
    static const uint8_t four[4] = { 0, 255, 100, 128 };
    db_image *small = db_image_new(4, 1, 1);
    if (CHECK(small != NULL)) {
        memcpy(small->data, four, 4);
        CHECK(db_image_write(small, path_of(path, sizeof path, "four.pbm"), DB_FILE_AUTO, 1)
              == DB_OK);
        CHECK(file_starts_with("four.pbm", "P4\n4 1\n\xa0", 8));
        /* The PNG 1-bit writer packs white as 1: bits 0 1 0 1. */
        CHECK(db_image_write(small, path_of(path, sizeof path, "four.png"), DB_FILE_AUTO, 1)
              == DB_OK);
        db_image *back = db_image_read(path);
        static const uint8_t four_binary[4] = { 0, 255, 0, 255 };
        CHECK(pixels_are(back, 4, 1, 1, four_binary));
        db_image_free(back);
        db_image_free(small);
    }

    /* Rows farther apart than width*channels: the padding must not be written. */
    db_image padded = { .width = 19, .height = 11, .channels = 3, .stride = 19 * 3 + 5 };
    padded.data = malloc(padded.stride * 11);
    if (CHECK(padded.data != NULL)) {
        memset(padded.data, 0xee, padded.stride * 11);
        for (int y = 0; y < 11; y++)
            memcpy(padded.data + (size_t)y * padded.stride, rgb->data + (size_t)y * rgb->stride,
                   19 * 3);
        round_trip(&padded, "padded.png", DB_FILE_AUTO, 8, rgb);
        round_trip(&padded, "padded.ppm", DB_FILE_AUTO, 8, rgb);
        free(padded.data);
    }

    /* Overwriting replaces the old file. */
    round_trip(binary, "gray8.png", DB_FILE_AUTO, 8, binary);

    /* A blank page compresses about as well as deflate can (near 1032:1) and
    ** must still be read back. */
    db_image *blank = db_image_new(2000, 1500, 1);
    if (CHECK(blank != NULL)) {
        memset(blank->data, 255, blank->stride * 1500);
        round_trip(blank, "blank1.png", DB_FILE_AUTO, 1, blank);
        round_trip(blank, "blank8.png", DB_FILE_AUTO, 8, blank);
        memset(blank->data, 0, blank->stride * 1500);
        round_trip(blank, "black1.png", DB_FILE_AUTO, 1, blank);
        db_image_free(blank);
    }

    /* One-pixel images. */
    db_image *dot = make_gray(1, 1);
    if (CHECK(dot != NULL)) {
        round_trip(dot, "dot.png", DB_FILE_AUTO, 8, dot);
        round_trip(dot, "dot.pgm", DB_FILE_AUTO, 8, dot);
        db_image_free(dot);
    }
    CHECK(temp_files_in(temp_dir) == 0);
done:
    db_image_free(gray);
    db_image_free(rgb);
    db_image_free(binary);
}

static void test_pnm_reading(void)
{
    /* P1 with comments anywhere, and digits with no separators. */
    static const uint8_t p1[6] = { 255, 0, 255, 0, 255, 0 };
    db_image *img = PNM("P1\n# a comment\n3 # width\n2\n0 1 0\n# between rows\n1 0 1\n");
    CHECK(pixels_are(img, 3, 2, 1, p1));
    db_image_free(img);
    img = PNM("P1 3 2 010101");
    CHECK(pixels_are(img, 3, 2, 1, p1));
    db_image_free(img);
    img = PNM("P1#comment right after the magic\r\n3\t2\v\f010\r\n101");
    CHECK(pixels_are(img, 3, 2, 1, p1));
    db_image_free(img);

    /* P2 with maxval 15 (exact: 17 v) and maxval 10 (rounded, halves up). */
    static const uint8_t p2_15[4] = { 0, 255, 119, 136 };
    img = PNM("P2\n4 1\n15\n0 15 7 8\n");
    CHECK(pixels_are(img, 4, 1, 1, p2_15));
    db_image_free(img);
    static const uint8_t p2_10[5] = { 26, 77, 128, 0, 255 };  /* 25.5, 76.5, 127.5 */
    img = PNM("P2 5 1 10 1 3 5 0 10");
    CHECK(pixels_are(img, 5, 1, 1, p2_10));
    db_image_free(img);
    static const uint8_t p2_16[3] = { 0, 128, 255 };  /* 32768*255/65535 = 127.5019 */
    img = PNM("P2 3 1 65535 0 32768 65535");
    CHECK(pixels_are(img, 3, 1, 1, p2_16));
    db_image_free(img);

    /* P3: colour stays colour. */
    static const uint8_t p3[6] = { 255, 0, 0, 10, 20, 30 };
    img = PNM("P3\n2 1\n255\n255 0 0\n10 20 30\n");
    CHECK(pixels_are(img, 2, 1, 3, p3));
    db_image_free(img);

    /* P4: 10 pixels a row, padded to 2 bytes; 1 is black. */
    static const uint8_t p4[20] = { 0, 255, 255, 255, 255, 255, 255, 0, 255, 0,
                                    255, 0, 255, 0, 255, 0, 255, 0, 255, 0 };
    img = PNM("P4\n10 2\n\x81\x40\x55\x55");
    CHECK(pixels_are(img, 10, 2, 1, p4));
    db_image_free(img);

    /* P5 8-bit, maxval 255 and 100. */
    static const uint8_t p5[3] = { 0, 7, 255 };
    img = PNM("P5\n3 1\n255\n\x00\x07\xff");
    CHECK(pixels_are(img, 3, 1, 1, p5));
    db_image_free(img);
    static const uint8_t p5_100[3] = { 0, 128, 255 };  /* 50*255/100 = 127.5 */
    img = PNM("P5 3 1 100\n\x00\x32\x64");
    CHECK(pixels_are(img, 3, 1, 1, p5_100));
    db_image_free(img);

    /* P5 16-bit, big-endian samples. */
    static const uint8_t p5_16[4] = { 0, 255, 128, 1 };  /* 0x8000 → 127.5019, 0x0101 → 1 */
    img = PNM("P5\n4 1\n65535\n\x00\x00\xff\xff\x80\x00\x01\x01");
    CHECK(pixels_are(img, 4, 1, 1, p5_16));
    db_image_free(img);
    static const uint8_t p5_1000[3] = { 128, 1, 255 };  /* 127.5 and 0.51 */
    img = PNM("P5 3 1 1000\n\x01\xf4\x00\x02\x03\xe8");
    CHECK(pixels_are(img, 3, 1, 1, p5_1000));
    db_image_free(img);

    /* P6 8-bit and 16-bit. */
    static const uint8_t p6[6] = { 1, 2, 3, 250, 251, 252 };
    img = PNM("P6\n# comment\n2 1\n255\n\x01\x02\x03\xfa\xfb\xfc");
    CHECK(pixels_are(img, 2, 1, 3, p6));
    db_image_free(img);
    static const uint8_t p6_16[3] = { 255, 0, 1 };  /* 128/257 = 0.498, 129/257 = 0.502 */
    img = PNM("P6 1 1 65535\n\xff\xff\x00\x80\x00\x81");
    CHECK(pixels_are(img, 1, 1, 3, p6_16));
    db_image_free(img);

    /* maxval 1 in a P5: 0 → 0, 1 → 255. */
    static const uint8_t p5_1[2] = { 0, 255 };
    img = PNM("P5 2 1 1\n\x00\x01");
    CHECK(pixels_are(img, 2, 1, 1, p5_1));
    db_image_free(img);

    /* Trailing data after the image (another image, say) is ignored. */
    img = PNM("P5 2 1 1\n\x00\x01P5 2 1 1\n\x00\x01");
    CHECK(pixels_are(img, 2, 1, 1, p5_1));
    db_image_free(img);

    /* From a file, too. */
    char path[512];
    CHECK(write_file("hand.pgm", "P2 4 1 15 0 15 7 8", 18));
    img = db_image_read(path_of(path, sizeof path, "hand.pgm"));
    CHECK(pixels_are(img, 4, 1, 1, p2_15));
    db_image_free(img);
}

static void test_bad_pnm(void)
{
    CHECK(FAILS("P5 0 0 255\n", DB_ERR_FORMAT));
    CHECK(FAILS("P1 0 5\n", DB_ERR_FORMAT));
    CHECK(FAILS("P5 3 0 255\n", DB_ERR_FORMAT));
    /* Must fail on the header alone: allocating 10^12 bytes would be noticed
    ** (it fails, or valgrind reports it). */
    CHECK(FAILS("P5 1000000 1000000 255\n\x00", DB_ERR_NOMEM));
    CHECK(FAILS("P4 1000000 1000000\n\x00", DB_ERR_NOMEM));
    CHECK(FAILS("P6 1000000 1000000 65535\n", DB_ERR_NOMEM));
    CHECK(FAILS("P5 1000001 1 255\n", DB_ERR_FORMAT));
    /* Large but allowed dimensions with almost no data: truncated, refused
    ** before the image is allocated. Allowed means within the size limit,
    ** which follows the memory the process may use: 30000 x 30000 (900 MB)
    ** where that is more than 1.8 GB, else 8000 x 8000. */
    int side = db_memory_size() / 2 > (size_t)30000 * 30000 ? 30000 : 8000;
    char large[3][64];
    snprintf(large[0], sizeof large[0], "P5 %d %d 255\n%c%c", side, side, 0, 0);
    snprintf(large[1], sizeof large[1], "P2 %d %d 255\n1 2 3", side, side);
    snprintf(large[2], sizeof large[2], "P1 %d %d\n0101", side, side);
    size_t p5_size = strlen(large[0]) + 2; /* the two NUL samples */
    CHECK(fails_with(large[0], p5_size, DB_ERR_FORMAT));
    CHECK(fails_with(large[1], strlen(large[1]), DB_ERR_FORMAT));
    CHECK(fails_with(large[2], strlen(large[2]), DB_ERR_FORMAT));
    CHECK(FAILS("P5 2 2 0\n\x00\x00\x00\x00", DB_ERR_FORMAT));
    CHECK(FAILS("P5 2 2 70000\n\x00\x00\x00\x00\x00\x00\x00\x00", DB_ERR_FORMAT));
    CHECK(FAILS("P2 2 1 65536 0 0", DB_ERR_FORMAT));
    CHECK(FAILS("P2 99999999999999999999999 1 255 0", DB_ERR_FORMAT));
    CHECK(FAILS("P2 2 1 99999999999999999999999999 0 0", DB_ERR_FORMAT));
    CHECK(FAILS("P2 2 1 255 0 99999999999999999999999999", DB_ERR_FORMAT));
    CHECK(FAILS("P2 two 1 255 0 0", DB_ERR_FORMAT));
    CHECK(FAILS("P2 2 1 255 0 x", DB_ERR_FORMAT));
    CHECK(FAILS("P2 2 1 255 0 -1", DB_ERR_FORMAT));
    CHECK(FAILS("P2 2 1 15 0 16", DB_ERR_FORMAT));
    CHECK(FAILS("P3 2 1 255 1 2 3 4 5", DB_ERR_FORMAT));
    CHECK(FAILS("P1 3 1 012", DB_ERR_FORMAT));
    CHECK(FAILS("P1 3 1 01", DB_ERR_FORMAT));
    CHECK(FAILS("P5 4 4 255\n0123456789", DB_ERR_FORMAT));
    CHECK(FAILS("P5 2 1 100\n\x00\x65", DB_ERR_FORMAT));
    CHECK(FAILS("P5 1 1 1000\n\x03\xe9", DB_ERR_FORMAT));
    CHECK(FAILS("P5 1 1 1000\n\x03", DB_ERR_FORMAT));
    CHECK(FAILS("P6 2 1 255\n\x01\x02\x03\x04\x05", DB_ERR_FORMAT));
    CHECK(FAILS("P4 9 2\n\x00\x00\x00", DB_ERR_FORMAT));
    CHECK(FAILS("P5 3 1 255", DB_ERR_FORMAT));
    CHECK(FAILS("P5 3 1 255x\x01\x02\x03", DB_ERR_FORMAT));
    CHECK(FAILS("P5 3 1", DB_ERR_FORMAT));
    CHECK(FAILS("P6", DB_ERR_FORMAT));
    CHECK(FAILS("P5x 1 1 255\n\x00", DB_ERR_FORMAT));
    CHECK(FAILS("P7\nWIDTH 1\n", DB_ERR_FORMAT) && strstr(db_error_message(), "PAM") != NULL);
    CHECK(FAILS("P", DB_ERR_FORMAT));
}

static void test_png_reading(void)
{
    /* Palette, 2 bits, with transparency: entry 1 half transparent, entry 2
    ** fully transparent, entry 3 opaque (no tRNS entry). Indices 0 1 2 / 3 0 1. */
    static const png_color palette[4] = { { 255, 0, 0 }, { 0, 255, 0 }, { 0, 0, 255 },
                                          { 10, 20, 30 } };
    static const uint8_t trans[3] = { 255, 128, 0 };
    static const uint8_t palette_rows[2] = { 0x18, 0xc4 };
    /* Over white with a = 128: 0 → (0 + 255*127 + 127)/255 = 127, 255 → 255. */
    static const uint8_t palette_expected[18] = { 255, 0, 0, 127, 255, 127, 255, 255, 255,
                                                  10, 20, 30, 255, 0, 0, 127, 255, 127 };
    struct png_spec spec = { .width = 3, .height = 2, .color_type = PNG_COLOR_TYPE_PALETTE,
                             .bit_depth = 2, .rows = palette_rows, .palette = palette,
                             .palette_size = 4, .trans_alpha = trans, .trans_count = 3 };
    db_image *img = decode_png(&spec);
    CHECK(pixels_are(img, 3, 2, 3, palette_expected));
    db_image_free(img);

    /* Palette, 8 bits, opaque: plain RGB. */
    static const uint8_t index_rows[3] = { 3, 0, 2 };
    static const uint8_t index_expected[9] = { 10, 20, 30, 255, 0, 0, 0, 0, 255 };
    spec = (struct png_spec){ .width = 3, .height = 1, .color_type = PNG_COLOR_TYPE_PALETTE,
                              .bit_depth = 8, .rows = index_rows, .palette = palette,
                              .palette_size = 4 };
    img = decode_png(&spec);
    CHECK(pixels_are(img, 3, 1, 3, index_expected));
    db_image_free(img);

    /* Gray 1, 2 and 4 bits: expanded to 0..255 (v*255/(2^bits - 1)). */
    static const uint8_t gray1_rows[2] = { 0xb0, 0x40 };
    static const uint8_t gray1_expected[10] = { 255, 0, 255, 255, 0, 0, 0, 0, 0, 255 };
    spec = (struct png_spec){ .width = 10, .height = 1, .color_type = PNG_COLOR_TYPE_GRAY,
                              .bit_depth = 1, .rows = gray1_rows };
    img = decode_png(&spec);
    CHECK(pixels_are(img, 10, 1, 1, gray1_expected));
    db_image_free(img);
    static const uint8_t gray2_rows[1] = { 0x1b };
    static const uint8_t gray2_expected[4] = { 0, 85, 170, 255 };
    spec = (struct png_spec){ .width = 4, .height = 1, .color_type = PNG_COLOR_TYPE_GRAY,
                              .bit_depth = 2, .rows = gray2_rows };
    img = decode_png(&spec);
    CHECK(pixels_are(img, 4, 1, 1, gray2_expected));
    db_image_free(img);
    static const uint8_t gray4_rows[2] = { 0x0f, 0x80 };
    static const uint8_t gray4_expected[3] = { 0, 255, 136 };
    spec = (struct png_spec){ .width = 3, .height = 1, .color_type = PNG_COLOR_TYPE_GRAY,
                              .bit_depth = 4, .rows = gray4_rows };
    img = decode_png(&spec);
    CHECK(pixels_are(img, 3, 1, 1, gray4_expected));
    db_image_free(img);

    /* Gray 16 bits: v/257 rounded to nearest. */
    static const uint8_t gray16_rows[8] = { 0, 0, 0xff, 0xff, 0x80, 0x80, 0x7f, 0xff };
    static const uint8_t gray16_expected[4] = { 0, 255, 128, 127 };
    spec = (struct png_spec){ .width = 4, .height = 1, .color_type = PNG_COLOR_TYPE_GRAY,
                              .bit_depth = 16, .rows = gray16_rows };
    img = decode_png(&spec);
    CHECK(pixels_are(img, 4, 1, 1, gray16_expected));
    db_image_free(img);

    /* Gray + alpha 16 bits, to one gray channel:
    ** (65535, 65535) → 255;  (0, 32896 → 128) → (255*127 + 127)/255 = 127;
    ** (32768 → 128, 65280 → 254) → (128*254 + 255 + 127)/255 = 128;
    ** (257 → 1, 65535) → 1. */
    static const uint8_t ga16_rows[16] = { 0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x80, 0x80,
                                           0x80, 0x00, 0xff, 0x00, 0x01, 0x01, 0xff, 0xff };
    static const uint8_t ga16_expected[4] = { 255, 127, 128, 1 };
    spec = (struct png_spec){ .width = 4, .height = 1,
                              .color_type = PNG_COLOR_TYPE_GRAY_ALPHA, .bit_depth = 16,
                              .rows = ga16_rows };
    img = decode_png(&spec);
    CHECK(pixels_are(img, 4, 1, 1, ga16_expected));
    db_image_free(img);

    /* Gray + alpha 8 bits. */
    static const uint8_t ga8_rows[6] = { 0, 0, 100, 255, 0, 1 };
    static const uint8_t ga8_expected[3] = { 255, 100, 254 };  /* (254*255 + 127)/255 */
    spec = (struct png_spec){ .width = 3, .height = 1,
                              .color_type = PNG_COLOR_TYPE_GRAY_ALPHA, .bit_depth = 8,
                              .rows = ga8_rows };
    img = decode_png(&spec);
    CHECK(pixels_are(img, 3, 1, 1, ga8_expected));
    db_image_free(img);

    /* RGBA 8 bits: (100, 50, 0) at a = 64 → (100*64 + 255*191 + 127)/255 = 216,
    ** (50*64 + 48705 + 127)/255 = 204, (48705 + 127)/255 = 191. */
    static const uint8_t rgba_rows[8] = { 10, 200, 30, 255, 100, 50, 0, 64 };
    static const uint8_t rgba_expected[6] = { 10, 200, 30, 216, 204, 191 };
    spec = (struct png_spec){ .width = 2, .height = 1, .color_type = PNG_COLOR_TYPE_RGB_ALPHA,
                              .bit_depth = 8, .rows = rgba_rows };
    img = decode_png(&spec);
    CHECK(pixels_are(img, 2, 1, 3, rgba_expected));
    db_image_free(img);

    /* RGBA 16 bits, fully opaque and fully transparent. */
    static const uint8_t rgba16_rows[16] = { 0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xff, 0xff,
                                             0, 0, 0, 0, 0, 0, 0, 0 };
    /* v/257: 0x1234 = 4660 → 18.13, 0x5678 = 22136 → 86.13, 0x9abc = 39612 → 154.13. */
    static const uint8_t rgba16_expected[6] = { 18, 86, 154, 255, 255, 255 };
    spec = (struct png_spec){ .width = 2, .height = 1, .color_type = PNG_COLOR_TYPE_RGB_ALPHA,
                              .bit_depth = 16, .rows = rgba16_rows };
    img = decode_png(&spec);
    CHECK(pixels_are(img, 2, 1, 3, rgba16_expected));
    db_image_free(img);

    /* RGB 16 bits: 128/257 = 0.498 → 0, 129/257 = 0.502 → 1. */
    static const uint8_t rgb16_rows[6] = { 0xff, 0xff, 0x00, 0x80, 0x00, 0x81 };
    static const uint8_t rgb16_expected[3] = { 255, 0, 1 };
    spec = (struct png_spec){ .width = 1, .height = 1, .color_type = PNG_COLOR_TYPE_RGB,
                              .bit_depth = 16, .rows = rgb16_rows };
    img = decode_png(&spec);
    CHECK(pixels_are(img, 1, 1, 3, rgb16_expected));
    db_image_free(img);

    /* tRNS on gray and RGB images: the one transparent value becomes white. */
    static const uint8_t gray_trns_rows[3] = { 7, 8, 200 };
    static const uint8_t gray_trns_expected[3] = { 255, 8, 200 };
    png_color_16 gray_key = { .gray = 7 };
    spec = (struct png_spec){ .width = 3, .height = 1, .color_type = PNG_COLOR_TYPE_GRAY,
                              .bit_depth = 8, .rows = gray_trns_rows, .trans_color = &gray_key };
    img = decode_png(&spec);
    CHECK(pixels_are(img, 3, 1, 1, gray_trns_expected));
    db_image_free(img);
    static const uint8_t rgb_trns_rows[6] = { 1, 2, 3, 1, 2, 4 };
    static const uint8_t rgb_trns_expected[6] = { 255, 255, 255, 1, 2, 4 };
    png_color_16 rgb_key = { .red = 1, .green = 2, .blue = 3 };
    spec = (struct png_spec){ .width = 2, .height = 1, .color_type = PNG_COLOR_TYPE_RGB,
                              .bit_depth = 8, .rows = rgb_trns_rows, .trans_color = &rgb_key };
    img = decode_png(&spec);
    CHECK(pixels_are(img, 2, 1, 3, rgb_trns_expected));
    db_image_free(img);

    /* Interlaced (Adam7) gray, RGBA and 1-bit palette; sizes not multiples of 8. */
    enum { W = 13, H = 11 };
    uint8_t gray_rows[W * H], rgba[W * H * 4], rgba_want[W * H * 3];
    for (int i = 0; i < W * H; i++) {
        gray_rows[i] = (uint8_t)(i * 37 + 5);
        rgba[i * 4 + 0] = (uint8_t)(i * 3);
        rgba[i * 4 + 1] = (uint8_t)(255 - i);
        rgba[i * 4 + 2] = (uint8_t)(i * 101);
        rgba[i * 4 + 3] = (uint8_t)(i * 59);
        for (int c = 0; c < 3; c++) {
            unsigned v = rgba[i * 4 + c], a = rgba[i * 4 + 3];
            rgba_want[i * 3 + c] = (uint8_t)((v * a + 255 * (255 - a) + 127) / 255);
        }
    }
    spec = (struct png_spec){ .width = W, .height = H, .color_type = PNG_COLOR_TYPE_GRAY,
                              .bit_depth = 8, .interlaced = 1, .rows = gray_rows };
    img = decode_png(&spec);
    CHECK(pixels_are(img, W, H, 1, gray_rows));
    db_image_free(img);
    spec = (struct png_spec){ .width = W, .height = H, .color_type = PNG_COLOR_TYPE_RGB_ALPHA,
                              .bit_depth = 8, .interlaced = 1, .rows = rgba };
    img = decode_png(&spec);
    CHECK(pixels_are(img, W, H, 3, rgba_want));
    db_image_free(img);
    /* The same, not interlaced: the one-row path gives the same pixels. */
    spec.interlaced = 0;
    img = decode_png(&spec);
    CHECK(pixels_are(img, W, H, 3, rgba_want));
    db_image_free(img);
    uint8_t bit_rows[2 * H], bit_want[W * H * 3];
    for (int y = 0; y < H; y++) {
        bit_rows[2 * y] = (uint8_t)(0x5a ^ y);
        bit_rows[2 * y + 1] = (uint8_t)(y * 16);
        for (int x = 0; x < W; x++) {
            int bit = (bit_rows[2 * y + x / 8] >> (7 - x % 8)) & 1;
            memcpy(bit_want + (y * W + x) * 3, &palette[bit], 3);
        }
    }
    spec = (struct png_spec){ .width = W, .height = H, .color_type = PNG_COLOR_TYPE_PALETTE,
                              .bit_depth = 1, .interlaced = 1, .rows = bit_rows,
                              .palette = palette, .palette_size = 2 };
    img = decode_png(&spec);
    CHECK(pixels_are(img, W, H, 3, bit_want));
    db_image_free(img);
}

static void test_bad_png(void)
{
    enum { W = 13, H = 11 };
    uint8_t rows[W * H * 4];
    for (int i = 0; i < W * H * 4; i++)
        rows[i] = (uint8_t)(i * 7);
    struct png_spec spec = { .width = W, .height = H, .color_type = PNG_COLOR_TYPE_RGB_ALPHA,
                             .bit_depth = 8, .interlaced = 1, .rows = rows };
    size_t size = 0;
    uint8_t *good = build_png(&spec, &size);
    if (!CHECK(good != NULL))
        return;
    db_image *img = db_image_read_memory(good, size, "good.png");
    CHECK(img != NULL);
    db_image_free(img);

    /* Cut at every length: each must fail as a format error. */
    int cut_failures = 0;
    for (size_t cut = 1; cut < size; cut++)
        if (!fails_with(good, cut, DB_ERR_FORMAT)) {
            fprintf(stderr, "  cut at %zu of %zu bytes\n", cut, size);
            cut_failures++;
        }
    CHECK(cut_failures == 0);
    CHECK(fails_with(good, size - 1, DB_ERR_FORMAT)
          && strstr(db_error_message(), "corrupt or truncated PNG") != NULL);

    uint8_t *bad = malloc(size);
    size_t idat = find_chunk(good, size, "IDAT");
    if (CHECK(bad != NULL && idat != 0)) {
        uint32_t length = get_be32(good + idat);
        /* A wrong CRC on IDAT. */
        memcpy(bad, good, size);
        bad[idat + 8 + length + 3] ^= 0x01;
        CHECK(fails_with(bad, size, DB_ERR_FORMAT));
        /* A wrong CRC on IHDR. */
        memcpy(bad, good, size);
        bad[8 + 8 + 13] ^= 0x80;
        CHECK(fails_with(bad, size, DB_ERR_FORMAT));
        /* A broken zlib header with a correct CRC. */
        memcpy(bad, good, size);
        bad[idat + 8] = 0x00;
        bad[idat + 9] = 0x00;
        fix_crc(bad, idat);
        CHECK(fails_with(bad, size, DB_ERR_FORMAT));
        /* Damaged compressed data with a correct CRC: any outcome but a crash;
        ** a failure must be a format error. */
        for (uint32_t i = 2; i < length; i += 3) {
            memcpy(bad, good, size);
            bad[idat + 8 + i] ^= 0x5a;
            fix_crc(bad, idat);
            db_error_clear();
            img = db_image_read_memory(bad, size, "bad.img");
            if (!img)
                CHECK(db_error_status() == DB_ERR_FORMAT);
            db_image_free(img);
        }
        /* A bad colour type in IHDR. */
        memcpy(bad, good, size);
        bad[8 + 8 + 9] = 5;
        fix_crc(bad, 8);
        CHECK(fails_with(bad, size, DB_ERR_FORMAT));
    }
    free(bad);
    free(good);

    /* Declared sizes: refused from the header, before any pixel memory. */
    uint8_t header[64];
    size = png_header_only(header, 1000000, 1000000, PNG_COLOR_TYPE_GRAY);
    CHECK(fails_with(header, size, DB_ERR_NOMEM)
          && strstr(db_error_message(), "1000000x1000000") != NULL);
    size = png_header_only(header, 100000, 100000, PNG_COLOR_TYPE_RGB);
    CHECK(fails_with(header, size, DB_ERR_NOMEM));
    size = png_header_only(header, 2000000, 1, PNG_COLOR_TYPE_GRAY);
    CHECK(fails_with(header, size, DB_ERR_FORMAT)
          && strstr(db_error_message(), "2000000x1") != NULL);
    /* Allowed dimensions, but far more pixels than the file could hold. */
    size = png_header_only(header, 20000, 20000, PNG_COLOR_TYPE_GRAY);
    CHECK(fails_with(header, size, DB_ERR_FORMAT)
          && strstr(db_error_message(), "truncated") != NULL);
    size = png_header_only(header, 1, 0x7fffffff, PNG_COLOR_TYPE_GRAY);
    CHECK(fails_with(header, size, DB_ERR_FORMAT));
    size = png_header_only(header, 0, 5, PNG_COLOR_TYPE_GRAY);
    CHECK(fails_with(header, size, DB_ERR_FORMAT));
    /* A valid header, but the image data is a stub. */
    size = png_header_only(header, 4, 4, PNG_COLOR_TYPE_GRAY);
    CHECK(fails_with(header, size, DB_ERR_FORMAT));
}

/* `png` with a chunk of `type` and `data` inserted right after IHDR; the
** caller frees the result. */
static uint8_t *with_chunk(const uint8_t *png, size_t size, const char *type, const void *data, uint32_t length,
                           size_t *out_size)
{
    size_t at = 8 + 25;
    uint8_t *out = malloc(size + 12 + length);
    if (!out)
        return NULL;
    memcpy(out, png, at);
    put_be32(out + at, length);
    memcpy(out + at + 4, type, 4);
    if (length)
        memcpy(out + at + 8, data, length);
    fix_crc(out, at);
    memcpy(out + at + 12 + length, png + at, size - at);
    *out_size = size + 12 + length;
    return out;
}

/* The peak resident set in kB, after resetting it where Linux allows (then
** it measures from now); -1 where it cannot be reset. */
static long peak_kb(int reset)
{
    if (reset) {
        FILE *f = fopen("/proc/self/clear_refs", "w");
        if (!f || fputs("5", f) < 0) {
            if (f)
                fclose(f);
            return -1;
        }
        if (fclose(f) != 0)
            return -1;
    }
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %ld kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb;
}

/* Chunks: lengths checked against the bytes present before libpng sees
** them, chunks docbin does not use skipped unread, and pHYs read and written. */
static void test_png_chunks(void)
{
    /* 44 bytes declaring a 2 GB text chunk: refused, without the 2 GB. */
    static const uint8_t text_bomb[] = {
        0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44,
        0x52, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x08, 0x08, 0x00, 0x00, 0x00, 0x00, 0xe1,
        0x64, 0xe1, 0x57, 0x7f, 0xff, 0xff, 0xff, 0x74, 0x45, 0x58, 0x74, 0x61, 0x62, 0x63,
    };
    long before = peak_kb(1);
    CHECK(fails_with(text_bomb, sizeof text_bomb, DB_ERR_FORMAT) && strstr(db_error_message(), "tEXt"));
    long after = peak_kb(0);
    if (before > 0 && after > 0)
        CHECK(after - before < 16 * 1024);

    uint8_t gray[8 * 6];
    for (size_t i = 0; i < sizeof gray; i++)
        gray[i] = (uint8_t)(i * 5);
    struct png_spec spec = { .width = 8, .height = 6, .color_type = PNG_COLOR_TYPE_GRAY, .bit_depth = 8,
                             .rows = gray };
    size_t size = 0, big_size = 0;
    uint8_t *plain = build_png(&spec, &size);
    if (!CHECK(plain != NULL))
        return;
    /* A chunk longer than PNG allows, and one longer than the file. */
    uint8_t *bad = with_chunk(plain, size, "tEXt", "k\0v", 3, &big_size);
    if (CHECK(bad != NULL)) {
        put_be32(bad + 33, 0x80000000u);
        CHECK(fails_with(bad, big_size, DB_ERR_FORMAT) && strstr(db_error_message(), "more than PNG allows"));
        put_be32(bad + 33, 4000);
        CHECK(fails_with(bad, big_size, DB_ERR_FORMAT) && strstr(db_error_message(), "declares 4000 bytes"));
    }
    free(bad);
    /* Large text and corrupt compressed text, profile and palette
    ** suggestions: present in full, skipped unread, the image unchanged. */
    enum { TEXT = 4 << 20 };
    uint8_t *text = malloc(TEXT);
    uint8_t *a = NULL, *b = NULL, *c = NULL;
    size_t a_size = 0, b_size = 0, c_size = 0;
    if (CHECK(text != NULL)) {
        memset(text, 'x', TEXT);
        memcpy(text, "Comment\0", 8);
        a = with_chunk(plain, size, "tEXt", text, TEXT, &a_size);
        memcpy(text, "Comment\0\0\x78\x01garbage", 19);
        b = a ? with_chunk(a, a_size, "zTXt", text, 19, &b_size) : NULL;
        memcpy(text, "icc\0\0\x78\x01not a profile", 20);
        c = b ? with_chunk(b, b_size, "iCCP", text, 20, &c_size) : NULL;
    }
    if (CHECK(c != NULL)) {
        before = peak_kb(1);
        db_image *img = db_image_read_memory(c, c_size, "text.png");
        after = peak_kb(0);
        CHECK(pixels_are(img, 8, 6, 1, gray));
        if (before > 0 && after > 0)
            CHECK(after - before < 2 * 1024);
        db_image_free(img);
    }
    free(a);
    free(b);
    free(c);
    free(text);

    /* pHYs: dots per metre to dpi, a whole dpi where it stores as the file says. */
    static const struct {
        uint32_t x, y;
        uint8_t unit;
        double dpi_x, dpi_y;
    } phys[] = {
        { 11811, 11811, 1, 300, 300 }, /* 300 dpi as every writer stores it */
        { 3780, 7874, 1, 96, 200 },
        { 1000, 1000, 1, 25.4, 25.4 }, /* 25 dpi would store as 984 */
        { 2, 1, 0, 0, 0 },             /* an aspect ratio only */
    };
    for (size_t i = 0; i < sizeof phys / sizeof phys[0]; i++) {
        uint8_t data[9];
        put_be32(data, phys[i].x);
        put_be32(data + 4, phys[i].y);
        data[8] = phys[i].unit;
        uint8_t *with = with_chunk(plain, size, "pHYs", data, 9, &big_size);
        db_image *img = with ? db_image_read_memory(with, big_size, "phys.png") : NULL;
        CHECK(img && fabs(img->dpi_x - phys[i].dpi_x) < 1e-9 && fabs(img->dpi_y - phys[i].dpi_y) < 1e-9);
        db_image_free(img);
        free(with);
    }
    free(plain);

    /* Writing: pHYs in dots per metre, rounded; none when the dpi is unknown. */
    char path[512];
    db_image *img = make_gray(5, 4);
    static const struct {
        double dpi_x, dpi_y;
        uint32_t x, y;
    } writes[] = { { 300, 300, 11811, 11811 }, { 72.5, 600, 2854, 23622 }, { 0, 0, 0, 0 } };
    for (size_t i = 0; img && i < sizeof writes / sizeof writes[0]; i++) {
        img->dpi_x = writes[i].dpi_x;
        img->dpi_y = writes[i].dpi_y;
        uint8_t *bytes = NULL;
        if (CHECK(db_image_write(img, path_of(path, sizeof path, "dpi.png"), DB_FILE_AUTO, 8) == DB_OK))
            bytes = read_file(path, &size);
        size_t at = bytes ? find_chunk(bytes, size, "pHYs") : 0;
        if (writes[i].x)
            CHECK(at && get_be32(bytes + at + 8) == writes[i].x && get_be32(bytes + at + 12) == writes[i].y
                  && bytes[at + 16] == 1);
        else
            CHECK(bytes && at == 0);
        free(bytes);
    }
    db_image_free(img);
}

static void test_bad_files(void)
{
    char path[512];
    CHECK(FAILS("", DB_ERR_FORMAT));
    CHECK(fails_with(NULL, 0, DB_ERR_FORMAT));
    CHECK(FAILS("Hello, this is not an image.\n", DB_ERR_FORMAT));
    CHECK(FAILS("\xff\xd8\xff\xe0 JFIF", DB_ERR_FORMAT)
          && strstr(db_error_message(), "JPEG") != NULL);
    CHECK(FAILS("II*\0 tiff", DB_ERR_FORMAT) && strstr(db_error_message(), "TIFF") != NULL);
    CHECK(FAILS("\x89PNG\r\n\x1a", DB_ERR_FORMAT));
    CHECK(FAILS("\x89PNG\r\n\x1a\n", DB_ERR_FORMAT));

    CHECK(write_file("empty.png", "", 0));
    db_error_clear();
    CHECK(db_image_read(path_of(path, sizeof path, "empty.png")) == NULL
          && db_error_status() == DB_ERR_FORMAT && strstr(db_error_message(), path) != NULL);
    CHECK(write_file("notes.txt", "just some text\n", 15));
    CHECK(db_image_read(path_of(path, sizeof path, "notes.txt")) == NULL
          && db_error_status() == DB_ERR_FORMAT);
    CHECK(db_image_read(path_of(path, sizeof path, "does-not-exist.png")) == NULL
          && db_error_status() == DB_ERR_IO && strstr(db_error_message(), path) != NULL);
    CHECK(db_image_read(temp_dir) == NULL && db_error_status() == DB_ERR_IO);
    CHECK(db_image_read(NULL) == NULL && db_error_status() == DB_ERR_USAGE);
    CHECK(db_image_read_memory((const uint8_t *)"", 0, NULL) == NULL
          && db_error_status() == DB_ERR_FORMAT);
}

static void test_bad_writes(void)
{
    char path[512];
    db_image *gray = make_gray(200, 200);
    db_image *rgb = make_rgb(4, 4);
    if (!CHECK(gray && rgb))
        goto done;

    /* Into a directory that does not exist: an I/O error naming the path and
    ** the likely fix; nothing is created. */
    path_of(path, sizeof path, "no-such-dir/out.png");
    db_error_clear();
    CHECK(db_image_write(gray, path, DB_FILE_AUTO, 8) == DB_ERR_IO);
    CHECK(strstr(db_error_message(), path) != NULL
          && strstr(db_error_message(), "does the directory exist?") != NULL);
    CHECK(!file_exists(path));
    CHECK(!file_exists(path_of(path, sizeof path, "no-such-dir")));

    /* Usage errors are found before any file is made. */
    CHECK(db_image_write(rgb, path_of(path, sizeof path, "rgb1.png"), DB_FILE_AUTO, 1)
          == DB_ERR_USAGE && !file_exists(path));
    CHECK(db_image_write(gray, path_of(path, sizeof path, "g4.png"), DB_FILE_AUTO, 4)
          == DB_ERR_USAGE && !file_exists(path));
    CHECK(db_image_write(gray, path_of(path, sizeof path, "out.jpg"), DB_FILE_AUTO, 8)
          == DB_ERR_USAGE && !file_exists(path));
    CHECK(db_image_write(gray, path_of(path, sizeof path, "noext"), DB_FILE_AUTO, 8)
          == DB_ERR_USAGE && !file_exists(path));
    CHECK(db_image_write(gray, path_of(path, sizeof path, "g8.pbm"), DB_FILE_AUTO, 8)
          == DB_ERR_USAGE && !file_exists(path));
    CHECK(db_image_write(gray, path_of(path, sizeof path, "g1.pgm"), DB_FILE_AUTO, 1)
          == DB_ERR_USAGE && !file_exists(path));
    CHECK(db_image_write(gray, path_of(path, sizeof path, "g.ppm"), DB_FILE_AUTO, 8)
          == DB_ERR_USAGE && !file_exists(path));
    CHECK(db_image_write(rgb, path_of(path, sizeof path, "c.pgm"), DB_FILE_AUTO, 8)
          == DB_ERR_USAGE && !file_exists(path));
    CHECK(db_image_write(gray, path_of(path, sizeof path, "x.png"), (db_file_format)7, 8)
          == DB_ERR_USAGE && !file_exists(path));
    CHECK(db_image_write(NULL, path_of(path, sizeof path, "null.png"), DB_FILE_AUTO, 8)
          == DB_ERR_USAGE && !file_exists(path));
    CHECK(db_image_write(gray, NULL, DB_FILE_AUTO, 8) == DB_ERR_USAGE);
    CHECK(db_image_write(gray, "", DB_FILE_AUTO, 8) == DB_ERR_USAGE);
    snprintf(path, sizeof path, "%s/", temp_dir);
    CHECK(db_image_write(gray, path, DB_FILE_AUTO, 8) == DB_ERR_USAGE);
    db_image broken = *gray;
    broken.stride = 10;
    CHECK(db_image_write(&broken, path_of(path, sizeof path, "broken.png"), DB_FILE_AUTO, 8)
          == DB_ERR_USAGE && !file_exists(path));

    /* A directory already has the name: the rename fails, the temporary goes. */
    CHECK(mkdir(path_of(path, sizeof path, "taken.png"), 0755) == 0);
    CHECK(db_image_write(gray, path, DB_FILE_AUTO, 8) == DB_ERR_IO);

    /* A write that fails part-way (the file size limit): no file under the
    ** final name and no temporary file, for every writer. */
    struct rlimit saved;
    if (CHECK(getrlimit(RLIMIT_FSIZE, &saved) == 0)) {
        struct rlimit small = saved;
        small.rlim_cur = 2000;
        signal(SIGXFSZ, SIG_IGN);
        if (CHECK(setrlimit(RLIMIT_FSIZE, &small) == 0)) {
            /* Noise so that PNG compression cannot fit it under the limit. */
            uint32_t state = 12345;
            for (size_t i = 0; i < gray->stride * (size_t)gray->height; i++) {
                state = state * 1103515245u + 12345u;
                gray->data[i] = (uint8_t)(state >> 24);
            }
            static const char *const names[] = { "big.png", "big1.png", "big.pgm", "big.pbm" };
            static const int bits[] = { 8, 1, 8, 1 };
            for (int i = 0; i < 4; i++) {
                db_error_clear();
                path_of(path, sizeof path, names[i]);
                CHECK(db_image_write(gray, path, DB_FILE_AUTO, bits[i]) == DB_ERR_IO);
                CHECK(strstr(db_error_message(), path) != NULL);
                CHECK(!file_exists(path));
            }
            setrlimit(RLIMIT_FSIZE, &saved);
        }
        signal(SIGXFSZ, SIG_DFL);
    }
    CHECK(temp_files_in(temp_dir) == 0);
done:
    db_image_free(gray);
    db_image_free(rgb);
}

/* A directory's images: the extensions in any case, hidden files, other
** names and a subdirectory named like an image left out, a dangling link
** kept (reading it says what is wrong), the names in strcmp order. */
static void test_list_dir(void)
{
    const char *const *all = db_image_exts;
    const int n_all = DB_IMAGE_N_EXTS;
    for (int i = 0; i < n_all; i++)
        CHECK(all[i] && all[i][0] == '.' && db_image_file_ext(all[i], all, n_all));
    CHECK(db_image_file_ext("scan.TIFF", all, n_all) && db_image_file_ext("photo.jpeg", all, n_all)
          && db_image_file_ext("a.j2k", all, n_all));
    CHECK(db_image_file_ext("page.PNG", all, n_all) && !strcmp(db_image_file_ext("page.PNG", all, n_all), ".PNG"));
    CHECK(db_image_file_ext("a.tar.pgm", all, n_all) && !strcmp(db_image_file_ext("a.tar.pgm", all, n_all), ".pgm"));
    CHECK(db_image_file_ext("scans/page.ppm", all, n_all) &&
          !strcmp(db_image_file_ext("scans/page.ppm", all, n_all), ".ppm"));
    CHECK(!db_image_file_ext("page.gif", all, n_all) && !db_image_file_ext("page", all, n_all) &&
          !db_image_file_ext("pages.png/x", all, n_all) && !db_image_file_ext("page.png.bak", all, n_all));
    const char *const gray[] = {".pgm", ".pbm"};
    CHECK(!db_image_file_ext("page.ppm", gray, 2) && db_image_file_ext("page.PBM", gray, 2));

    char dir[512], path[1024];
    path_of(dir, sizeof dir, "list");
    CHECK(mkdir(dir, 0755) == 0);
    const char *files[] = {"b.png", "a.PGM", "c.ppm", "e.pnm", "f.pbm", ".hidden.png", "notes.txt", "png"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        FILE *f = fopen(path, "wb");
        CHECK(f && fclose(f) == 0);
    }
    snprintf(path, sizeof path, "%s/sub.png", dir);
    CHECK(mkdir(path, 0755) == 0);
    snprintf(path, sizeof path, "%s/d.png", dir);
    CHECK(symlink("missing.png", path) == 0);

    char **names = NULL;
    size_t n = 0;
    CHECK(db_image_list_dir(dir, all, n_all, &names, &n) == DB_OK);
    const char *want[] = {"a.PGM", "b.png", "c.ppm", "d.png", "e.pnm", "f.pbm"};
    int same = n == sizeof want / sizeof want[0];
    for (size_t i = 0; same && i < n; i++)
        same = !strcmp(names[i], want[i]);
    CHECK(same);
    if (!same)
        for (size_t i = 0; i < n; i++)
            fprintf(stderr, "  listed %s\n", names[i]);
    db_image_list_free(names, n);
    /* Only the extensions asked for. */
    CHECK(db_image_list_dir(dir, gray, 2, &names, &n) == DB_OK && n == 2 && !strcmp(names[0], "a.PGM") &&
          !strcmp(names[1], "f.pbm"));
    db_image_list_free(names, n);

    /* A directory with no image, and one that is missing: the latter an error naming it. */
    path_of(dir, sizeof dir, "list/sub.png");
    CHECK(db_image_list_dir(dir, all, n_all, &names, &n) == DB_OK && n == 0 && names == NULL);
    path_of(dir, sizeof dir, "no-such-dir");
    CHECK(db_image_list_dir(dir, all, n_all, &names, &n) == DB_ERR_IO && strstr(db_error_message(), dir) && n == 0 &&
          names == NULL);
}

int main(void)
{
    umask(022);
    if (!mkdtemp(temp_dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_check_size();
    test_round_trips();
    test_pnm_reading();
    test_bad_pnm();
    test_png_reading();
    test_bad_png();
    test_png_chunks();
    test_bad_files();
    test_bad_writes();
    test_peek();
    test_list_dir();
    remove_tree(temp_dir);
    if (failures) {
        fprintf(stderr, "test_image_io: %d of %d checks failed\n", failures, checks);
        return 1;
    }
    printf("test_image_io: all %d checks passed\n", checks);
    return 0;
}
