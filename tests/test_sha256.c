/*
** test_sha256.c — checks runtime/sha256.c against the FIPS 180-4 example
** messages and messages whose padding falls on each block-boundary case.
*/
#include "runtime/sha256.h"

#include <stdio.h>
#include <string.h>

static int failures;

static void expect(const char *what, const uint8_t digest[32], const char *want)
{
    char hex[65];
    db_sha256_hex(digest, hex);
    if (strcmp(hex, want) != 0) {
        printf("FAIL: %s\n  got  %s\n  want %s\n", what, hex, want);
        failures++;
    }
}

static void expect_message(const char *what, const char *msg, const char *want)
{
    db_sha256 s;
    uint8_t digest[32];
    db_sha256_init(&s);
    db_sha256_update(&s, msg, strlen(msg));
    db_sha256_final(&s, digest);
    expect(what, digest, want);
}

/* n bytes of 'a', fed whole and then one byte at a time: lengths around 55, 56
** and 64 take the three padding paths (one block, an extra block, a full block). */
static void expect_as(size_t n, const char *want)
{
    static char a[128];
    memset(a, 'a', sizeof a);
    char what[64];
    db_sha256 s;
    uint8_t digest[32];

    db_sha256_init(&s);
    db_sha256_update(&s, a, n);
    db_sha256_final(&s, digest);
    snprintf(what, sizeof what, "%zu x 'a'", n);
    expect(what, digest, want);

    db_sha256_init(&s);
    for (size_t i = 0; i < n; i++)
        db_sha256_update(&s, a, 1);
    db_sha256_final(&s, digest);
    snprintf(what, sizeof what, "%zu x 'a', byte by byte", n);
    expect(what, digest, want);
}

int main(void)
{
    expect_message("empty message", "",
                   "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    expect_message("\"abc\"", "abc",
                   "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    expect_message("448-bit message",
                   "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
                   "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    expect_message("896-bit message",
                   "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmno"
                   "ijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
                   "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");

    expect_as(55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
    expect_as(56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
    expect_as(63, "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34");
    expect_as(64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
    expect_as(65, "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0");
    expect_as(119, "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb");
    expect_as(120, "2f3d335432c70b580af0e8e1b3674a7c020d683aa5f73aaaedfdc55af904c21c");

    /* One million 'a' in chunks of 1, 3, 7, ... bytes, so that updates start and
    ** end at every offset inside a block. */
    {
        static char a[1000];
        memset(a, 'a', sizeof a);
        static const size_t chunks[] = {1, 3, 7, 31, 63, 65, 127, 999};
        db_sha256 s;
        uint8_t digest[32];
        db_sha256_init(&s);
        size_t left = 1000000;
        for (size_t i = 0; left > 0; i++) {
            size_t take = chunks[i % (sizeof chunks / sizeof chunks[0])];
            if (take > left)
                take = left;
            db_sha256_update(&s, a, take);
            left -= take;
        }
        db_sha256_final(&s, digest);
        expect("one million 'a' in odd-sized chunks", digest,
               "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    }

    if (failures) {
        printf("%d check(s) failed\n", failures);
        return 1;
    }
    printf("sha256: all vectors match\n");
    return 0;
}
