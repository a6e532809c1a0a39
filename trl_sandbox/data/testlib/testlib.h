/*
 * trl-sandbox's testlib-compatible header.
 *
 * This file is trl-sandbox's own, independent implementation of the programming interface of testlib
 * (the checker / interactor / validator / generator library by Mike Mirzayanov, MIT-licensed,
 * https://github.com/MikeMirzayanov/testlib).  None of the original library's text is included here:
 * this header was written from scratch to reproduce testlib's observable behaviour (verdicts, exit
 * codes, the messages on stderr and in the report file) so that contest checkers written against
 * testlib.h compile and judge the same way.
 *
 * To use the official header instead, point trl-sandbox at it: `trl-sandbox testlib download` fetches a
 * pinned release, then set TRL_SANDBOX_TESTLIB_H (or the config field sandbox_testlib_header).
 *
 * Compile-time switches honoured as in testlib: ENABLE_UNEXPECTED_EOF, TESTSYS (partial-score exit base
 * 50), EJUDGE / CONTESTER exit codes, and the *_EXIT_CODE macros.
 */
#ifndef TRL_SANDBOX_TESTLIB_H
#define TRL_SANDBOX_TESTLIB_H
#ifndef _TESTLIB_H_
#define _TESTLIB_H_
#endif

#include <algorithm>
#include <cctype>
#include <climits>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>
#include <fcntl.h>
#include <stdarg.h>
#include <unistd.h>

/* ---------------------------------------------------------------- exit codes */
#ifndef OK_EXIT_CODE
#ifdef CONTESTER
#define OK_EXIT_CODE 0xAC
#else
#define OK_EXIT_CODE 0
#endif
#endif
#ifndef WA_EXIT_CODE
#if defined(EJUDGE)
#define WA_EXIT_CODE 5
#elif defined(CONTESTER)
#define WA_EXIT_CODE 0xAB
#else
#define WA_EXIT_CODE 1
#endif
#endif
#ifndef PE_EXIT_CODE
#if defined(EJUDGE)
#define PE_EXIT_CODE 4
#elif defined(CONTESTER)
#define PE_EXIT_CODE 0xAA
#else
#define PE_EXIT_CODE 2
#endif
#endif
#ifndef FAIL_EXIT_CODE
#if defined(EJUDGE)
#define FAIL_EXIT_CODE 6
#elif defined(CONTESTER)
#define FAIL_EXIT_CODE 0xA3
#else
#define FAIL_EXIT_CODE 3
#endif
#endif
#ifndef DIRT_EXIT_CODE
#ifdef EJUDGE
#define DIRT_EXIT_CODE 6
#else
#define DIRT_EXIT_CODE 4
#endif
#endif
#ifndef POINTS_EXIT_CODE
#define POINTS_EXIT_CODE 7
#endif
#ifndef UNEXPECTED_EOF_EXIT_CODE
#define UNEXPECTED_EOF_EXIT_CODE 8
#endif
#ifndef PC_BASE_EXIT_CODE
#ifdef TESTSYS
#define PC_BASE_EXIT_CODE 50
#else
#define PC_BASE_EXIT_CODE 0
#endif
#endif

#ifdef __GNUC__
#define TRL_TL_NORETURN __attribute__((noreturn))
#define TRL_TL_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define TRL_TL_NORETURN
#define TRL_TL_PRINTF(a, b)
#endif
#ifndef NORETURN
#define NORETURN TRL_TL_NORETURN
#endif

#define LF ((char)10)
#define CR ((char)13)
#define TAB ((char)9)
#define SPACE ((char)' ')
#define EOFC (255)

#ifndef I64
#define I64 "%lld"
#endif
#ifndef U64
#define U64 "%llu"
#endif

/* ---------------------------------------------------------------- verdicts */
enum TMode { _input, _output, _answer };

enum TResult {
    _ok = 0,
    _wa = 1,
    _pe = 2,
    _fail = 3,
    _dirt = 4,
    _points = 5,
    _unexpected_eof = 8,
    _partially = 16
};

enum TTestlibMode { _unknown, _checker, _validator, _generator, _interactor, _scorer };

#define _pc(exitCode) (TResult(_partially + (exitCode)))

/* ---------------------------------------------------------------- small helpers */
namespace trl_tl {

inline std::string vformat(const char *fmt, va_list ap) {
    va_list copy;
    va_copy(copy, ap);
    char small[1024];
    int need = std::vsnprintf(small, sizeof small, fmt, copy);
    va_end(copy);
    if (need < 0)
        return std::string();
    if (need < int(sizeof small))
        return std::string(small, size_t(need));
    std::string out(size_t(need) + 1, '\0');
    std::vsnprintf(&out[0], out.size(), fmt, ap);
    out.resize(size_t(need));
    return out;
}

/* Markers the verdict code uses around text it appends to a message; printed as parentheses. */
const char MARK_OPEN = char(11);
const char MARK_CLOSE = char(17);

/* Where exactly one opening and one closing marker occur in that order: their positions, else false. */
inline bool markerPair(const std::string &m, size_t &open, size_t &close) {
    int nOpen = 0, nClose = 0;
    for (size_t i = 0; i < m.size(); i++) {
        if (m[i] == MARK_OPEN)
            nOpen++, open = i;
        else if (m[i] == MARK_CLOSE)
            nClose++, close = i;
    }
    return nOpen == 1 && nClose == 1 && open < close;
}

inline std::string appendNote(const std::string &m, const std::string &note) {
    size_t open = 0, close = 0;
    if (markerPair(m, open, close)) {
        size_t at = m.find(note, open);
        if (at != std::string::npos && at < close)
            return m;
        std::string r = m;
        r.insert(close, ", " + note);
        return r;
    }
    return m + " " + MARK_OPEN + note + MARK_CLOSE;
}

inline std::string printable(const std::string &m) {
    size_t open = 0, close = 0;
    if (!markerPair(m, open, close))
        return m;
    std::string r = m;
    r[open] = '(';
    r[close] = ')';
    return r;
}

inline std::string shortPart(const std::string &s) {
    std::string t(s);
    std::replace(t.begin(), t.end(), '\0', '~');
    if (t.size() <= 64)
        return t;
    return t.substr(0, 30) + "..." + t.substr(s.size() - 31, 31);
}

/* x if positive, else -x: so that a zero comes out as -0.0, as in testlib's arithmetic */
inline double signAbs(double x) { return x > 0 ? x : -x; }

inline bool isNaN(double x) {
    volatile double v = x;
    return v != v;
}

inline bool isHuge(double x) {
    volatile double v = x;
    return v > 1E300 || v < -1E300;
}

inline std::string trimZeroes(std::string v) {
    if (v.find('.') != std::string::npos)
        while (!v.empty() && v.back() == '0')
            v.pop_back();
    if (!v.empty() && v.back() == '.')
        v += '0';
    return v;
}

template <typename T> std::string digitsOf(T value) {
    if (value == 0)
        return "0";
    std::string s;
    bool neg = value < 0;
    while (value != 0) {
        T d = value % 10;
        s += char('0' + (d < 0 ? -d : d));
        value /= 10;
    }
    if (neg)
        s += '-';
    std::reverse(s.begin(), s.end());
    return s;
}

template <typename T> std::string streamed(const T &value) {
    std::ostringstream os;
    os << value;
    std::istringstream is(os.str());
    std::string first;
    is >> first;
    return first;
}

template <typename T> std::string toStr(const T &v, std::true_type) { return digitsOf(v); }
template <typename T> std::string toStr(const T &v, std::false_type) { return streamed(v); }

}  // namespace trl_tl

template <typename T> static std::string vtos(const T &t) {
    return trl_tl::toStr(t, std::integral_constant<bool, std::is_integral<T>::value>());
}

template <typename T> static std::string toString(const T &t) { return vtos(t); }

/* As testlib's toHumanReadableString: values with 7+ trailing zeros print as a*10^k. */
template <typename T> static std::string toHumanReadableString(const T &n) {
    if (n == 0)
        return vtos(n);
    int zeros = 0;
    T m = n;
    while (m % 10 == 0)
        m /= 10, zeros++;
    if (zeros < 7)
        return vtos(n);
    std::string p = "10^" + vtos(zeros);
    if (m == 1)
        return p;
    if (!std::is_unsigned<T>::value && m == T(0) - T(1))
        return "-" + p;
    return vtos(m) + "*" + p;
}

inline std::string upperCase(std::string s) {
    for (char &c : s)
        if (c >= 'a' && c <= 'z')
            c = char(c - 'a' + 'A');
    return s;
}

inline std::string lowerCase(std::string s) {
    for (char &c : s)
        if (c >= 'A' && c <= 'Z')
            c = char(c - 'A' + 'a');
    return s;
}

template <typename C> inline bool isEof(C c) { return c == EOFC; }
template <typename C> inline bool isEoln(C c) { return c == LF || c == CR; }
template <typename C> inline bool isBlanks(C c) { return c == LF || c == CR || c == SPACE || c == TAB; }

inline std::string trim(const std::string &s) {
    size_t b = 0, e = s.size();
    while (b < e && isBlanks(s[b]))
        b++;
    while (e > b && isBlanks(s[e - 1]))
        e--;
    return s.substr(b, e - b);
}

inline std::string compress(const std::string &s) { return trl_tl::shortPart(s); }

inline std::string englishEnding(int x) {
    x %= 100;
    if (x / 10 == 1)
        return "th";
    switch (x % 10) {
        case 1: return "st";
        case 2: return "nd";
        case 3: return "rd";
        default: return "th";
    }
}

inline bool doubleCompare(double expected, double result, double MAX_DOUBLE_ERROR) {
    double eps = MAX_DOUBLE_ERROR + 1E-15;
    if (trl_tl::isNaN(expected))
        return trl_tl::isNaN(result);
    if (trl_tl::isHuge(expected))
        return trl_tl::isHuge(result) && (expected > 0 ? result > 0 : result < 0);
    if (trl_tl::isNaN(result) || trl_tl::isHuge(result))
        return false;
    if (trl_tl::signAbs(result - expected) <= eps)
        return true;
    double a = expected * (1.0 - eps), b = expected * (1.0 + eps);
    return result >= (a < b ? a : b) && result <= (a > b ? a : b);
}

/* min(absolute, relative) error; zero differences keep the sign testlib's own arithmetic gives them (-0.0). */
inline double doubleDelta(double expected, double result) {
    double absolute = trl_tl::signAbs(result - expected);
    if (trl_tl::signAbs(expected) > 1E-9) {
        double relative = trl_tl::signAbs(absolute / expected);
        return absolute < relative ? absolute : relative;
    }
    return absolute;
}

inline std::vector<std::string> trl_tl_split(const std::string &s, const std::string &seps, bool keepEmpty) {
    std::vector<std::string> out;
    if (seps.empty())
        return std::vector<std::string>(1, s);
    std::string cur;
    for (char c : s) {
        if (seps.find(c) != std::string::npos) {
            if (keepEmpty || !cur.empty())
                out.push_back(cur);
            cur.clear();
        } else
            cur += c;
    }
    if (keepEmpty || !cur.empty())
        out.push_back(cur);
    return out;
}
inline std::vector<std::string> split(const std::string &s, char sep) { return trl_tl_split(s, std::string(1, sep), true); }
inline std::vector<std::string> split(const std::string &s, const std::string &seps) { return trl_tl_split(s, seps, true); }
inline std::vector<std::string> tokenize(const std::string &s, char sep) { return trl_tl_split(s, std::string(1, sep), false); }
inline std::vector<std::string> tokenize(const std::string &s, const std::string &seps) { return trl_tl_split(s, seps, false); }

template <typename It, typename Sep> std::string join(It first, It last, Sep sep) {
    std::ostringstream os;
    for (It i = first; i != last; ++i) {
        if (i != first)
            os << sep;
        os << *i;
    }
    return os.str();
}
template <typename It> std::string join(It first, It last) { return join(first, last, ' '); }
template <typename C, typename Sep> std::string join(const C &c, Sep sep) { return join(c.begin(), c.end(), sep); }
template <typename C> std::string join(const C &c) { return join(c.begin(), c.end(), ' '); }

inline std::string testlib_format_(const char *fmt, ...) TRL_TL_PRINTF(1, 2);
inline std::string testlib_format_(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    std::string r = trl_tl::vformat(fmt, ap);
    va_end(ap);
    return r;
}

#if (__cplusplus >= 202002L && defined(__has_include))
#if __has_include(<format>)
#define TRL_TL_TEMPLATE_FORMAT 1
#endif
#endif
#ifdef TRL_TL_TEMPLATE_FORMAT
template <typename... Args> std::string format(const char *fmt, Args &&...args) {
    int n = std::snprintf(nullptr, 0, fmt, args...);
    std::vector<char> buf(size_t(n > 0 ? n : 0) + 1);
    std::snprintf(buf.data(), buf.size(), fmt, args...);
    return std::string(buf.data());
}
template <typename... Args> std::string format(const std::string fmt, Args &&...args) {
    return format(fmt.c_str(), std::forward<Args>(args)...);
}
#else
inline std::string format(const char *fmt, ...) TRL_TL_PRINTF(1, 2);
inline std::string format(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    std::string r = trl_tl::vformat(fmt, ap);
    va_end(ap);
    return r;
}
inline std::string format(const std::string fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    std::string r = trl_tl::vformat(fmt.c_str(), ap);
    va_end(ap);
    return r;
}
#endif

/* ---------------------------------------------------------------- global state */
struct InStream;
class random_t;
namespace trl_tl {
struct State {
    TTestlibMode mode = _unknown;
    std::string resultName;
    bool appes = false;
    std::string appesEncoding = "windows-1251";
    std::string checkerName = "untitled checker";
    bool hasTestCase = false;
    int testCase = -1;
    double points = std::numeric_limits<float>::infinity();
    bool registered = false;
    bool guardAlive = true;
    bool finalizing = false;
    int quitCount = 0;
    int readEofCount = 0;
    std::string testset, group;
};
inline State &st() {
    static State *s = new State();  // never destroyed: the exit-time checks still read it
    return *s;
}
TRL_TL_NORETURN inline void failNow(const std::string &message);
}  // namespace trl_tl

/* ---------------------------------------------------------------- patterns */
/*
 * testlib's pattern language: a sequence of atoms, each a character or a [class] (ranges, ^ negation,
 * backslash escapes) followed by an optional count ({n}, {n,m}, ?, *, +); | separates alternatives and
 * a pattern wholly wrapped in ( ) is a group.  Unescaped spaces are ignored.  As in testlib, an atom
 * takes as many characters as it may (greedily) and never gives any back.
 */
class pattern {
public:
    pattern(std::string s = "");
    std::string next(random_t &rnd) const;
    bool matches(const std::string &s) const { return matchFrom(s, 0); }
    std::string src() const { return source; }

private:
    struct Node {
        unsigned char set[32];
        bool hasAtom = false;
        int lo = 0, hi = 0;
        std::vector<char> pool;  // members as testlib lists them (signed order, repeats kept) for next()
        std::vector<Node> alternatives;  // tried in order for the rest of the text
        bool has(unsigned char c) const { return (set[c >> 3] >> (c & 7)) & 1; }
    };
    std::string source;
    Node root;
    bool matchFrom(const std::string &s, size_t pos) const { return matchNode(root, s, pos); }
    static bool matchNode(const Node &n, const std::string &s, size_t pos);
    static void build(Node &n, const std::string &text, const std::string &whole);
    static std::string emit(const Node &n, random_t &rnd);
};

/* ---------------------------------------------------------------- random */
/* A 48-bit linear congruential generator driven the way testlib's random_t drives its own, so that
 * generators seeded from the same command line produce the same tests. */
class random_t {
    unsigned long long state;
    static const unsigned long long MUL = 0x5DEECE66DULL;
    static const unsigned long long ADD = 0xBULL;
    static const unsigned long long MASK = (1ULL << 48) - 1;

    long long bits(int n) {
        if (n <= 48) {
            state = (state * MUL + ADD) & MASK;
            return (long long)(state >> (48 - n));
        }
        if (n > 63)
            trl_tl::failNow("random_t::nextBits(int bits): n must be less than 64");
        long long high = bits(31) << 32;
        long long low = bits(version == 0 ? 31 : 32);
        return high ^ low;
    }

public:
    static int version;
    random_t() : state(3905348978240129619ULL) {}

    void setSeed(int argc, char *argv[]) {
        state = 3905348978240129619ULL;
        for (int i = 1; i < argc; i++) {
            for (const char *p = argv[i]; *p; ++p)
                state = state * MUL + (unsigned int)(*p) + ADD;
            state += MUL / ADD;
        }
        state &= MASK;
    }
    void setSeed(long long seed) { state = ((unsigned long long)seed ^ MUL) & MASK; }

    std::string next(const std::string &ptrn) { return pattern(ptrn).next(*this); }
    std::string next(const char *fmt, ...) TRL_TL_PRINTF(2, 3) {
        va_list ap;
        va_start(ap, fmt);
        std::string p = trl_tl::vformat(fmt, ap);
        va_end(ap);
        return next(p);
    }

    int next(int n) {
        if (n <= 0)
            trl_tl::failNow("random_t::next(int n): n must be positive");
        if ((n & -n) == n)
            return int((n * (long long)bits(31)) >> 31);
        const long long limit = INT_MAX / n * n;
        long long b;
        do
            b = bits(31);
        while (b >= limit);
        return int(b % n);
    }
    unsigned int next(unsigned int n) {
        if (n >= INT_MAX)
            trl_tl::failNow("random_t::next(unsigned int n): n must be less INT_MAX");
        return (unsigned int)next(int(n));
    }
    long long next(long long n) {
        if (n <= 0)
            trl_tl::failNow("random_t::next(long long n): n must be positive");
        const long long limit = LLONG_MAX / n * n;
        long long b;
        do
            b = bits(63);
        while (b >= limit);
        return b % n;
    }
    unsigned long long next(unsigned long long n) {
        if (n >= (unsigned long long)LLONG_MAX)
            trl_tl::failNow("random_t::next(unsigned long long n): n must be less LONGLONG_MAX");
        return (unsigned long long)next((long long)n);
    }
    long next(long n) { return (long)next((long long)n); }
    unsigned long next(unsigned long n) {
        if (n >= (unsigned long)LONG_MAX)
            trl_tl::failNow("random_t::next(unsigned long n): n must be less LONG_MAX");
        return (unsigned long)next((unsigned long long)n);
    }
    int next(int from, int to) { return int(next((long long)to - from + 1) + from); }
    unsigned int next(unsigned int from, unsigned int to) { return (unsigned int)(next((long long)to - from + 1) + from); }
    long long next(long long from, long long to) { return next(to - from + 1) + from; }
    unsigned long long next(unsigned long long from, unsigned long long to) {
        if (from > to)
            trl_tl::failNow("random_t::next(unsigned long long from, unsigned long long to): from can't not exceed to");
        return next(to - from + 1) + from;
    }
    long next(long from, long to) { return next(to - from + 1) + from; }
    unsigned long next(unsigned long from, unsigned long to) {
        if (from > to)
            trl_tl::failNow("random_t::next(unsigned long from, unsigned long to): from can't not exceed to");
        return next(to - from + 1) + from;
    }
    double next() {
        long long a = bits(26) << 27;
        long long b = bits(27);
        double r = double(a + b) / double(1LL << 53);
        return std::min(1.0, std::max(0.0, r));
    }
    double next(double n) {
        if (n <= 0.0)
            trl_tl::failNow("random_t::next(double): n should be positive");
        return std::min(n, std::max(0.0, n * next()));
    }
    double next(double from, double to) {
        if (from >= to)
            trl_tl::failNow("random_t::next(double from, double to): from should be strictly less than to");
        return next(to - from) + from;
    }

    template <typename C> typename C::value_type any(const C &c) {
        int size = int(c.size());
        if (size <= 0)
            trl_tl::failNow("random_t::any(const Container& c): c.size() must be positive");
        typename C::const_iterator it = c.begin();
        std::advance(it, next(size));
        return *it;
    }
    template <typename It> typename It::value_type any(const It &begin, const It &end) {
        int size = int(std::distance(begin, end));
        if (size <= 0)
            trl_tl::failNow("random_t::any(const Iter& begin, const Iter& end): range must have positive length");
        It it = begin;
        std::advance(it, next(size));
        return *it;
    }

    /* Weighted pick: type > 0 keeps the max of type+1 draws, type < 0 the min (testlib's wnext). */
    template <typename T> T weighted(T n, int type) {
        if (std::abs(type) < 25) {
            T r = next(n);
            for (int i = 0; i < type; i++)
                r = std::max(r, next(n));
            for (int i = 0; i < -type; i++)
                r = std::min(r, next(n));
            return r;
        }
        double p = type > 0 ? std::pow(next() + 0.0, 1.0 / (type + 1)) : 1 - std::pow(next() + 0.0, 1.0 / (-type + 1));
        T r = (T)(double(n) * p);
        return std::min(n, std::max(T(0), r));
    }
    int wnext(int n, int type) {
        if (n <= 0)
            trl_tl::failNow("random_t::wnext(int n, int type): n must be positive");
        return weighted(n, type);
    }
    long long wnext(long long n, int type) {
        if (n <= 0)
            trl_tl::failNow("random_t::wnext(long long n, int type): n must be positive");
        return weighted(n, type);
    }
    double wnext(double n, int type) {
        if (n <= 0)
            trl_tl::failNow("random_t::wnext(double n, int type): n must be positive");
        if (std::abs(type) < 25) {
            double r = next();
            for (int i = 0; i < type; i++)
                r = std::max(r, next());
            for (int i = 0; i < -type; i++)
                r = std::min(r, next());
            return n * r;
        }
        double p = type > 0 ? std::pow(next() + 0.0, 1.0 / (type + 1)) : 1 - std::pow(next() + 0.0, 1.0 / (-type + 1));
        return std::min(n, std::max(0.0, n * p));
    }
    double wnext(int type) { return wnext(1.0, type); }
    unsigned int wnext(unsigned int n, int type) { return (unsigned int)wnext(int(n), type); }
    unsigned long long wnext(unsigned long long n, int type) { return (unsigned long long)wnext((long long)n, type); }
    long wnext(long n, int type) { return (long)wnext((long long)n, type); }
    unsigned long wnext(unsigned long n, int type) { return (unsigned long)wnext((long long)n, type); }
    int wnext(int from, int to, int type) { return wnext(to - from + 1, type) + from; }
    int wnext(unsigned int from, unsigned int to, int type) { return int(wnext(to - from + 1, type) + from); }
    long long wnext(long long from, long long to, int type) { return wnext(to - from + 1, type) + from; }
    unsigned long long wnext(unsigned long long from, unsigned long long to, int type) {
        return wnext(to - from + 1, type) + from;
    }
    long wnext(long from, long to, int type) { return wnext(to - from + 1, type) + from; }
    unsigned long wnext(unsigned long from, unsigned long to, int type) { return wnext(to - from + 1, type) + from; }
    double wnext(double from, double to, int type) { return wnext(to - from, type) + from; }

    template <typename C> typename C::value_type wany(const C &c, int type) {
        typename C::const_iterator it = c.begin();
        std::advance(it, wnext(int(c.size()), type));
        return *it;
    }

    template <typename T, typename E> std::vector<E> perm(T size, E first) {
        if (size < 0)
            trl_tl::failNow("random_t::perm(T size, E first = 0): size must non-negative");
        std::vector<E> p;
        for (T i = 0; i < size; i++)
            p.push_back(E(first + E(i)));
        for (T i = 1; i < size; i++)
            std::swap(p[i], p[next(i + 1)]);
        return p;
    }
    template <typename T> std::vector<T> perm(T size) { return perm(size, T(0)); }

    template <typename T> std::vector<T> distinct(int size, T from, T to) {
        std::vector<T> out;
        if (size == 0)
            return out;
        if (from > to)
            trl_tl::failNow("random_t::distinct expected from <= to");
        if (size < 0)
            trl_tl::failNow("random_t::distinct expected size >= 0");
        uint64_t n = uint64_t(to - from) + 1;
        if (uint64_t(size) > n)
            trl_tl::failNow("random_t::distinct expected size <= to - from + 1");
        double expected = 0.0;
        for (int i = 1; i <= size; i++)
            expected += double(n) / double(n - i + 1);
        if (expected < double(n)) {
            std::set<T> seen;
            while (int(seen.size()) < size) {
                T x = T(next(from, to));
                if (seen.insert(x).second)
                    out.push_back(x);
            }
        } else {
            if (n > 1000000000)
                trl_tl::failNow("random_t::distinct here expected to - from + 1 <= 1000000000");
            std::vector<T> p = perm(int(n), from);
            out.assign(p.begin(), p.begin() + size);
        }
        return out;
    }
    template <typename T> std::vector<T> distinct(int size, T upper) {
        if (size < 0)
            trl_tl::failNow("random_t::distinct expected size >= 0");
        if (size == 0)
            return std::vector<T>();
        if (upper <= 0)
            trl_tl::failNow("random_t::distinct expected upper > 0");
        if (size > upper)
            trl_tl::failNow("random_t::distinct expected size <= upper");
        return distinct(size, T(0), upper - 1);
    }

    template <typename T> std::vector<T> partition(int size, T sum, T minPart) {
        if (size < 0)
            trl_tl::failNow("random_t::partition: size < 0");
        if (size == 0 && sum != 0)
            trl_tl::failNow("random_t::partition: size == 0 && sum != 0");
        if (minPart * size > sum)
            trl_tl::failNow("random_t::partition: min_part * size > sum");
        if (size == 0)
            return std::vector<T>();
        T free = sum - minPart * size;
        std::vector<T> cuts(size);
        std::vector<T> d = distinct(size - 1, T(1), T(free + size - 1));
        for (int i = 0; i + 1 < size; i++)
            cuts[i + 1] = d[i];
        std::sort(cuts.begin(), cuts.end());
        std::vector<T> parts(size);
        for (int i = 0; i + 1 < size; i++)
            parts[i] = cuts[i + 1] - cuts[i] - 1;
        parts[size - 1] = free + size - 1 - cuts.back();
        for (T &x : parts)
            x += minPart;
        return parts;
    }
    template <typename T> std::vector<T> partition(int size, T sum) { return partition(size, sum, T(1)); }
};
int random_t::version = -1;

/* ---------------------------------------------------------------- pattern implementation */
namespace trl_tl {
inline bool isCommand(const std::string &s, size_t pos, char value) {
    if (pos >= s.size() || s[pos] != value)
        return false;
    size_t slashes = 0;
    while (slashes < pos && s[pos - 1 - slashes] == '\\')
        slashes++;
    return slashes % 2 == 0;
}
inline char takeChar(const std::string &s, size_t &pos) {
    if (s[pos] == '\\')
        pos++;
    return s[pos++];
}
TRL_TL_NORETURN inline void badPattern(const std::string &s) { failNow("pattern: Illegal pattern (or part) \"" + s + "\""); }
}  // namespace trl_tl

inline pattern::pattern(std::string s) : source(s) {
    std::string text;
    for (size_t i = 0; i < s.size(); i++)
        if (!trl_tl::isCommand(s, i, ' '))
            text += s[i];
    build(root, text, text);
}

inline void pattern::build(Node &n, const std::string &s, const std::string &whole) {
    using trl_tl::isCommand;
    std::memset(n.set, 0, sizeof n.set);
    int depth = 0, firstClose = -1;
    std::vector<size_t> bars;
    for (size_t i = 0; i < s.size(); i++) {
        if (isCommand(s, i, '(')) {
            depth++;
            continue;
        }
        if (isCommand(s, i, ')')) {
            depth--;
            if (depth == 0 && firstClose < 0)
                firstClose = int(i);
            continue;
        }
        if (depth < 0)
            trl_tl::badPattern(s);
        if (depth == 0 && isCommand(s, i, '|'))
            bars.push_back(i);
    }
    if (depth != 0)
        trl_tl::badPattern(s);
    if (bars.empty() && s.size() >= 1 && firstClose + 1 == int(s.size()) && isCommand(s, 0, '(') &&
        isCommand(s, s.size() - 1, ')')) {
        n.alternatives.emplace_back();
        build(n.alternatives.back(), s.substr(1, s.size() - 2), whole);
        return;
    }
    if (!bars.empty()) {
        size_t start = 0;
        bars.push_back(s.size());
        for (size_t b : bars) {
            n.alternatives.emplace_back();
            build(n.alternatives.back(), s.substr(start, b - start), whole);
            start = b + 1;
        }
        return;
    }
    /* one atom, its count, then the rest */
    size_t pos = 0;
    if (s.empty())
        trl_tl::badPattern(s);
    std::vector<unsigned char> members;
    if (isCommand(s, pos, '[')) {
        pos++;
        bool negate = isCommand(s, pos, '^');
        if (negate)
            pos++;
        int pending = -1;
        while (pos < s.size() && !isCommand(s, pos, ']')) {
            if (isCommand(s, pos, '-') && pending > 0) {
                pos++;
                if (pos + 1 == s.size() || isCommand(s, pos, ']')) {
                    members.push_back((unsigned char)pending);
                    pending = '-';
                    continue;
                }
                char hiC = trl_tl::takeChar(s, pos);
                char loC = char(pending);
                if (loC > hiC)
                    trl_tl::badPattern(s);
                for (int c = loC; c <= hiC; c++)
                    members.push_back((unsigned char)(char)c);
                pending = -1;
            } else {
                if (pending > 0)
                    members.push_back((unsigned char)pending);
                pending = (unsigned char)trl_tl::takeChar(s, pos);
                if (pending == 0)
                    pending = -1;  // a NUL member is never kept, as in testlib
            }
        }
        if (pending > 0)
            members.push_back((unsigned char)pending);
        if (!isCommand(s, pos, ']'))
            trl_tl::badPattern(s);
        pos++;
        if (negate) {
            bool in[256] = {false};
            for (unsigned char c : members)
                in[c] = true;
            members.clear();
            for (int c = 0; c < 256; c++)
                if (!in[c] && c != 255)
                    members.push_back((unsigned char)c);
        }
    } else
        members.push_back((unsigned char)trl_tl::takeChar(s, pos));
    for (unsigned char c : members) {
        n.set[c >> 3] |= (unsigned char)(1u << (c & 7));
        n.pool.push_back(char(c));
    }
    std::sort(n.pool.begin(), n.pool.end());
    n.hasAtom = true;
    /* count */
    n.lo = n.hi = 1;
    if (pos < s.size()) {
        if (isCommand(s, pos, '{')) {
            pos++;
            std::vector<std::string> parts;
            std::string part;
            while (pos < s.size() && !isCommand(s, pos, '}')) {
                if (isCommand(s, pos, ','))
                    parts.push_back(part), part.clear(), pos++;
                else
                    part += trl_tl::takeChar(s, pos);
            }
            if (!part.empty())
                parts.push_back(part);
            if (!isCommand(s, pos, '}') || parts.empty() || parts.size() > 2)
                trl_tl::badPattern(s);
            pos++;
            int v[2] = {0, 0};
            for (size_t i = 0; i < parts.size(); i++)
                if (parts[i].empty() || std::sscanf(parts[i].c_str(), "%d", &v[i]) != 1)
                    trl_tl::badPattern(s);
            n.lo = v[0];
            n.hi = parts.size() == 2 ? v[1] : v[0];
            if (n.lo > n.hi)
                trl_tl::badPattern(s);
        } else if (isCommand(s, pos, '?'))
            n.lo = 0, n.hi = 1, pos++;
        else if (isCommand(s, pos, '*'))
            n.lo = 0, n.hi = INT_MAX, pos++;
        else if (isCommand(s, pos, '+'))
            n.lo = 1, n.hi = INT_MAX, pos++;
    }
    if (pos < s.size()) {
        n.alternatives.emplace_back();
        build(n.alternatives.back(), s.substr(pos), whole);
    }
}

inline bool pattern::matchNode(const Node &n, const std::string &s, size_t pos) {
    if (n.hasAtom && n.hi > 0) {
        size_t run = 0;
        while (pos + run < s.size() && n.has((unsigned char)s[pos + run]))
            run++;
        if (run < size_t(n.lo))
            return false;
        pos += std::min(run, size_t(n.hi));
    }
    if (n.alternatives.empty())
        return pos == s.size();
    for (const Node &a : n.alternatives)
        if (matchNode(a, s, pos))
            return true;
    return false;
}

inline std::string pattern::emit(const Node &n, random_t &rnd) {
    std::string out;
    if (n.hasAtom && n.hi == INT_MAX)
        trl_tl::failNow("pattern::next(random_t& rnd): can't process character '*' for generation");
    if (n.hasAtom && n.hi > 0) {
        const std::vector<char> &chars = n.pool;
        int count = rnd.next(n.hi - n.lo + 1) + n.lo;
        for (int i = 0; i < count; i++)
            out += chars[size_t(rnd.next(int(chars.size())))];
    }
    if (!n.alternatives.empty())
        out += emit(n.alternatives[size_t(rnd.next(int(n.alternatives.size())))], rnd);
    return out;
}

inline std::string pattern::next(random_t &rnd) const { return emit(root, rnd); }

/* ---------------------------------------------------------------- character sources */
namespace trl_tl {
/* Reads a whole file into memory; bytes come back as signed chars, the end as EOFC (as testlib's
 * buffered file reader does). */
class Source {
public:
    virtual ~Source() {}
    virtual int cur() = 0;
    virtual int next() = 0;
    virtual void skip() = 0;
    virtual void unread(int c) = 0;
    virtual bool eof() = 0;
    virtual int line() = 0;
    virtual void close() = 0;
};

class MemorySource : public Source {
    std::string data;
    size_t pos = 0;
    std::vector<int> back;
    int lineNo = 1;

public:
    explicit MemorySource(std::string d) : data(std::move(d)) {}
    int cur() override {
        if (!back.empty())
            return back.back();
        return pos < data.size() ? int((signed char)data[pos]) : EOFC;
    }
    int next() override {
        int c;
        if (!back.empty()) {
            c = back.back();
            if (c == EOFC)
                return EOFC;
            back.pop_back();
        } else {
            if (pos >= data.size())
                return EOFC;
            c = int((signed char)data[pos++]);
        }
        if (c == LF)
            lineNo++;
        return c;
    }
    void skip() override { next(); }
    void unread(int c) override {
        back.push_back(c);
        if (c == LF)
            lineNo--;
    }
    bool eof() override { return cur() == EOFC; }
    int line() override { return lineNo; }
    void close() override {}
};

/* Standard input, read a byte at a time (an interactor must not read ahead of its partner); a 0xFF byte
 * reads as EOFC, as with testlib's reader of standard streams. */
class StdSource : public Source {
    std::FILE *file;
    std::vector<int> undo;
    int lineNo = 1;
    int raw() {
        int c;
        if (undo.empty())
            c = std::getc(file);
        else
            c = undo.back(), undo.pop_back();
        if (c == LF)
            lineNo++;
        return c;
    }
    static int mapped(int c) { return c == EOF ? EOFC : c; }

public:
    explicit StdSource(std::FILE *f) : file(f) {}
    int cur() override {
        if (std::feof(file))
            return EOFC;
        int c = raw();
        unread(c);
        return mapped(c);
    }
    int next() override { return std::feof(file) ? EOFC : mapped(raw()); }
    void skip() override { raw(); }
    void unread(int c) override {
        if (c == LF)
            lineNo--;
        undo.push_back(c);
    }
    bool eof() override {
        if (file == nullptr || std::feof(file))
            return true;
        int c = next();
        if (c == EOFC)
            return true;
        unread(c);
        return false;
    }
    int line() override { return lineNo; }
    void close() override {}
};
}  // namespace trl_tl

/* ---------------------------------------------------------------- InStream */
struct InStream;
extern InStream inf, ouf, ans;
extern std::fstream tout;
extern random_t rnd;

TRL_TL_NORETURN inline void quit(TResult result, const char *msg);
TRL_TL_NORETURN inline void quit(TResult result, const std::string &msg);
TRL_TL_NORETURN inline void quitf(TResult result, const char *format, ...) TRL_TL_PRINTF(2, 3);

struct InStream {
    static const int NO_INDEX = INT_MAX;
    static const char OPEN_BRACKET = char(11);
    static const char CLOSE_BRACKET = char(17);
    enum { LightGray, LightRed, LightCyan, LightGreen, LightYellow };

    trl_tl::Source *reader = nullptr;
    int lastLine = -1;
    std::string name;
    TMode mode = _input;
    bool opened = false;
    bool stdfile = false;
    bool strict = false;
    int readManyIteration = NO_INDEX;
    size_t maxFileSize = 128 * 1024 * 1024;
    size_t maxTokenLength = 32 * 1024 * 1024;
    size_t maxMessageLength = 32000;
    std::string _tmpReadToken;

    InStream() {}
    InStream(const InStream &base, std::string content)
        : reader(new trl_tl::MemorySource(std::move(content))), name("based on " + base.name), mode(base.mode),
          opened(true), strict(base.strict) {}
    ~InStream() { close(); }
    InStream(const InStream &) = delete;
    InStream &operator=(const InStream &) = delete;

    /* -- opening -- */
    void init(std::string fileName, TMode m) {
        opened = false;
        name = fileName;
        stdfile = false;
        mode = m;
        std::FILE *f = std::fopen(fileName.c_str(), "rb");
        if (f == nullptr) {
            if (mode == _output)
                quits(_pe, "Output file not found: \"" + name + "\"");
            if (mode == _answer)
                quits(_fail, "Answer file not found: \"" + name + "\"");
            return;
        }
        std::string data;
        char buf[65536];
        size_t got;
        while ((got = std::fread(buf, 1, sizeof buf, f)) > 0)
            data.append(buf, got);
        std::fclose(f);
        if (data.size() > maxFileSize)
            quitf(_pe, "File size exceeds %d bytes, size is %d", int(maxFileSize), int(data.size()));
        reader = new trl_tl::MemorySource(std::move(data));
        opened = true;
    }
    void init(std::FILE *f, TMode m) {
        mode = m;
        name = f == stdin ? "stdin" : f == stdout ? "stdout" : f == stderr ? "stderr" : "untitled";
        stdfile = f == stdin || f == stdout || f == stderr;
        close();
        reader = new trl_tl::StdSource(f);
        opened = true;
    }
    void close() {
        if (reader != nullptr) {
            reader->close();
            delete reader;
            reader = nullptr;
        }
        opened = false;
    }
    void skipBom() {
        static const char bom[] = "\xEF\xBB\xBF";
        int matched = 0;
        while (matched < 3 && curChar() == bom[matched])
            skipChar(), matched++;
        if (matched < 3)
            while (matched > 0)
                unreadChar(bom[--matched]);
    }

    /* -- characters -- */
    char curChar() { return char(reader->cur()); }
    char nextChar() { return char(reader->next()); }
    char readChar() { return nextChar(); }
    char readChar(char c) {
        lastLine = reader->line();
        char found = readChar();
        if (found != c) {
            if (isEoln(found))
                quit(_pe, ("Unexpected character #" + vtos(int(found)) + ", but '" + std::string(1, c) + "' expected")
                              .c_str());
            quit(_pe, ("Unexpected character '" + std::string(1, found) + "', but '" + std::string(1, c) + "' expected")
                          .c_str());
        }
        return found;
    }
    char readSpace() { return readChar(' '); }
    void unreadChar(char c) { reader->unread(c); }
    void skipChar() { reader->skip(); }
    void skipBlanks() {
        while (isBlanks(reader->cur()))
            reader->skip();
    }

    /* -- positions -- */
    bool eof() {
        if (!strict && reader == nullptr)
            return true;
        return reader->eof();
    }
    bool seekEof() {
        if (!strict && reader == nullptr)
            return true;
        skipBlanks();
        return eof();
    }
    bool eoln() {
        if (!strict && reader == nullptr)
            return true;
        int c = reader->next();
        if (strict) {
            if (c != LF) {
                reader->unread(c);
                return false;
            }
            return true;
        }
        if (c == EOFC || c == LF)
            return true;
        if (c == CR) {
            int d = reader->next();
            if (d == LF)
                return true;
            reader->unread(d);
            reader->unread(CR);
            return false;
        }
        reader->unread(c);
        return false;
    }
    bool seekEoln() {
        if (!strict && reader == nullptr)
            return true;
        int c;
        do
            c = reader->next();
        while (c == SPACE || c == TAB);
        reader->unread(c);
        return eoln();
    }
    void readEoln() {
        lastLine = reader->line();
        if (!eoln())
            quit(_pe, "Expected EOLN");
    }
    void readEof() {
        lastLine = reader->line();
        if (!eof())
            quit(_pe, "Expected EOF");
        if (trl_tl::st().guardAlive && this == &inf)
            trl_tl::st().readEofCount++;
    }
    void nextLine() { readLine(); }

    /* -- tokens -- */
    void readWordTo(std::string &result) {
        if (!strict)
            skipBlanks();
        lastLine = reader->line();
        int c = reader->next();
        if (c == EOFC)
            quit(_unexpected_eof, "Unexpected end of file - token expected");
        if (isBlanks(c))
            quit(_pe, "Unexpected white-space - token expected");
        result.clear();
        while (!isBlanks(c) && c != EOFC) {
            result += char(c);
            if (result.size() > maxTokenLength)
                quitf(_pe, "Length of token exceeds %d, token is '%s...'", int(maxTokenLength),
                      trl_tl::shortPart(result).c_str());
            c = reader->next();
        }
        reader->unread(c);
        if (result.empty())
            quit(_unexpected_eof, "Unexpected end of file or white-space - token expected");
    }
    std::string readWord() {
        readWordTo(_tmpReadToken);
        return _tmpReadToken;
    }
    std::string readToken() { return readWord(); }
    void readTokenTo(std::string &r) { readWordTo(r); }

    void checkPattern(const std::string &value, const pattern &p, const std::string &var, const char *kind) {
        if (p.matches(value))
            return;
        std::string v = trl_tl::shortPart(value);
        std::string tail = "\" doesn't correspond to pattern \"" + p.src() + "\"";
        std::string named = "\", doesn't correspond to pattern \"" + p.src() + "\"";
        std::string k(kind);
        if (readManyIteration == NO_INDEX) {
            if (var.empty())
                quit(_wa, (k + " \"" + v + tail).c_str());
            quit(_wa, (k + (k == "Line" ? " [name=" : " parameter [name=") + var + "] equals to \"" + v + named).c_str());
        }
        if (var.empty())
            quit(_wa, (k + " element [index=" + vtos(readManyIteration) + "] equals to \"" + v + tail).c_str());
        quit(_wa, (k + " element " + var + "[" + vtos(readManyIteration) + "] equals to \"" + v + named).c_str());
    }
    void readWordTo(std::string &r, const pattern &p, const std::string &var = "") {
        readWordTo(r);
        int saved = readManyIteration;
        readManyIteration = NO_INDEX;  // testlib's *To variants always report as single values
        checkPattern(r, p, var, "Token");
        readManyIteration = saved;
    }
    void readWordTo(std::string &r, const std::string &ptrn, const std::string &var = "") {
        readWordTo(r, pattern(ptrn), var);
    }
    void readTokenTo(std::string &r, const pattern &p, const std::string &var = "") { readWordTo(r, p, var); }
    void readTokenTo(std::string &r, const std::string &ptrn, const std::string &var = "") {
        readWordTo(r, pattern(ptrn), var);
    }
    std::string readWord(const pattern &p, const std::string &var = "") {
        readWordTo(_tmpReadToken);
        checkPattern(_tmpReadToken, p, var, "Token");
        return _tmpReadToken;
    }
    std::string readWord(const std::string &ptrn, const std::string &var = "") { return readWord(pattern(ptrn), var); }
    std::string readToken(const pattern &p, const std::string &var = "") { return readWord(p, var); }
    std::string readToken(const std::string &ptrn, const std::string &var = "") { return readWord(pattern(ptrn), var); }

    /* -- numbers -- */
    int readInteger() {
        if (!strict && seekEof())
            quit(_unexpected_eof, "Unexpected end of file - int32 expected");
        readWordTo(_tmpReadToken);
        long long v = parseLong(_tmpReadToken);
        if (v < INT_MIN || v > INT_MAX)
            quit(_pe, ("Expected int32, but \"" + trl_tl::shortPart(_tmpReadToken) + "\" found").c_str());
        return int(v);
    }
    int readInt() { return readInteger(); }
    long long readLong() {
        if (!strict && seekEof())
            quit(_unexpected_eof, "Unexpected end of file - int64 expected");
        readWordTo(_tmpReadToken);
        return parseLong(_tmpReadToken);
    }
    unsigned long long readUnsignedLong() {
        if (!strict && seekEof())
            quit(_unexpected_eof, "Unexpected end of file - int64 expected");
        readWordTo(_tmpReadToken);
        return parseUnsigned(_tmpReadToken);
    }
    double readReal() {
        if (!strict && seekEof())
            quit(_unexpected_eof, "Unexpected end of file - double expected");
        return parseDouble(readWord());
    }
    double readDouble() { return readReal(); }

    template <typename T> static std::string intRange(T lo, T hi) {
        return "[" + toHumanReadableString(lo) + ", " + toHumanReadableString(hi) + "]";
    }
    static std::string realRange(double lo, double hi) { return "[" + vtos(lo) + ", " + vtos(hi) + "]"; }
    void rangeError(const char *kind, const std::string &value, const std::string &range, const std::string &var) {
        std::string k(kind);
        if (readManyIteration == NO_INDEX) {
            if (var.empty())
                quit(_wa, (k + " " + value + " violates the range " + range).c_str());
            quit(_wa, (k + " parameter [name=" + var + "] equals to " + value + ", violates the range " + range).c_str());
        }
        if (var.empty())
            quit(_wa, (k + " element [index=" + vtos(readManyIteration) + "] equals to " + value +
                       ", violates the range " + range)
                          .c_str());
        quit(_wa, (k + " element " + var + "[" + vtos(readManyIteration) + "] equals to " + value +
                   ", violates the range " + range)
                      .c_str());
    }
    int readInt(int lo, int hi, const std::string &var = "") {
        int v = readInt();
        if (v < lo || v > hi)
            rangeError("Integer", vtos(v), intRange(lo, hi), var);
        return v;
    }
    int readInteger(int lo, int hi, const std::string &var = "") { return readInt(lo, hi, var); }
    long long readLong(long long lo, long long hi, const std::string &var = "") {
        long long v = readLong();
        if (v < lo || v > hi)
            rangeError("Integer", vtos(v), intRange(lo, hi), var);
        return v;
    }
    long long readLong(unsigned long long lo, unsigned long long hi, const std::string &var = "") {
        return (long long)readUnsignedLong(lo, hi, var);
    }
    unsigned long long readUnsignedLong(unsigned long long lo, unsigned long long hi, const std::string &var = "") {
        unsigned long long v = readUnsignedLong();
        if (v < lo || v > hi)
            rangeError("Unsigned integer", vtos(v), intRange(lo, hi), var);
        return v;
    }
    double readReal(double lo, double hi, const std::string &var = "") {
        double v = readReal();
        if (v < lo || v > hi)
            rangeError("Double", vtos(v), realRange(lo, hi), var);
        return v;
    }
    double readDouble(double lo, double hi, const std::string &var = "") { return readReal(lo, hi, var); }
    double readStrictReal(double lo, double hi, int minDigits, int maxDigits, const std::string &var = "") {
        if (!strict && seekEof())
            quit(_unexpected_eof, "Unexpected end of file - strict double expected");
        double v = parseStrictDouble(readWord(), minDigits, maxDigits);
        if (v < lo || v > hi)
            rangeError("Strict double", vtos(v), realRange(lo, hi), var);
        return v;
    }
    double readStrictDouble(double lo, double hi, int minDigits, int maxDigits, const std::string &var = "") {
        return readStrictReal(lo, hi, minDigits, maxDigits, var);
    }

    /* -- many values at once (strict streams demand single spaces between them) -- */
    template <typename T, typename F> std::vector<T> readMany(int size, int indexBase, bool spaced, const char *what, F one) {
        if (size < 0)
            quit(_fail, (std::string(what) + ": size should be non-negative.").c_str());
        if (size > 100000000)
            quit(_fail, (std::string(what) + ": size should be at most 100000000.").c_str());
        std::vector<T> out(static_cast<size_t>(size));
        readManyIteration = indexBase;
        for (int i = 0; i < size; i++) {
            out[size_t(i)] = one();
            readManyIteration++;
            if (strict && spaced && i + 1 < size)
                readSpace();
        }
        readManyIteration = NO_INDEX;
        return out;
    }
#define TRL_TL_MANY(T, what, spaced, call) return readMany<T>(size, indexBase, spaced, what, [&]() { return call; })
    std::vector<int> readInts(int size, int lo, int hi, const std::string &var = "", int indexBase = 1) {
        TRL_TL_MANY(int, "readInts", true, readInt(lo, hi, var));
    }
    std::vector<int> readInts(int size, int indexBase = 1) { TRL_TL_MANY(int, "readInts", true, readInt()); }
    std::vector<int> readIntegers(int size, int lo, int hi, const std::string &var = "", int indexBase = 1) {
        TRL_TL_MANY(int, "readIntegers", true, readInt(lo, hi, var));
    }
    std::vector<int> readIntegers(int size, int indexBase = 1) { TRL_TL_MANY(int, "readIntegers", true, readInt()); }
    std::vector<long long> readLongs(int size, long long lo, long long hi, const std::string &var = "", int indexBase = 1) {
        TRL_TL_MANY(long long, "readLongs", true, readLong(lo, hi, var));
    }
    std::vector<long long> readLongs(int size, int indexBase = 1) { TRL_TL_MANY(long long, "readLongs", true, readLong()); }
    std::vector<unsigned long long> readUnsignedLongs(int size, unsigned long long lo, unsigned long long hi,
                                                      const std::string &var = "", int indexBase = 1) {
        TRL_TL_MANY(unsigned long long, "readUnsignedLongs", true, readUnsignedLong(lo, hi, var));
    }
    std::vector<unsigned long long> readUnsignedLongs(int size, int indexBase = 1) {
        TRL_TL_MANY(unsigned long long, "readUnsignedLongs", true, readUnsignedLong());
    }
    std::vector<double> readReals(int size, double lo, double hi, const std::string &var = "", int indexBase = 1) {
        TRL_TL_MANY(double, "readReals", true, readReal(lo, hi, var));
    }
    std::vector<double> readReals(int size, int indexBase = 1) { TRL_TL_MANY(double, "readReals", true, readReal()); }
    std::vector<double> readDoubles(int size, double lo, double hi, const std::string &var = "", int indexBase = 1) {
        TRL_TL_MANY(double, "readDoubles", true, readReal(lo, hi, var));
    }
    std::vector<double> readDoubles(int size, int indexBase = 1) { TRL_TL_MANY(double, "readDoubles", true, readReal()); }
    std::vector<double> readStrictReals(int size, double lo, double hi, int minD, int maxD, const std::string &var = "",
                                        int indexBase = 1) {
        TRL_TL_MANY(double, "readStrictReals", true, readStrictReal(lo, hi, minD, maxD, var));
    }
    std::vector<double> readStrictDoubles(int size, double lo, double hi, int minD, int maxD,
                                          const std::string &var = "", int indexBase = 1) {
        TRL_TL_MANY(double, "readStrictDoubles", true, readStrictReal(lo, hi, minD, maxD, var));
    }
    std::vector<std::string> readWords(int size, int indexBase = 1) {
        TRL_TL_MANY(std::string, "readWords", true, readWord());
    }
    std::vector<std::string> readWords(int size, const pattern &p, const std::string &var = "", int indexBase = 1) {
        TRL_TL_MANY(std::string, "readWords", true, readWord(p, var));
    }
    std::vector<std::string> readWords(int size, const std::string &ptrn, const std::string &var = "",
                                       int indexBase = 1) {
        pattern p(ptrn);
        TRL_TL_MANY(std::string, "readWords", true, readWord(p, var));
    }
    std::vector<std::string> readTokens(int size, int indexBase = 1) {
        TRL_TL_MANY(std::string, "readTokens", true, readWord());
    }
    std::vector<std::string> readTokens(int size, const pattern &p, const std::string &var = "", int indexBase = 1) {
        TRL_TL_MANY(std::string, "readTokens", true, readWord(p, var));
    }
    std::vector<std::string> readTokens(int size, const std::string &ptrn, const std::string &var = "",
                                        int indexBase = 1) {
        pattern p(ptrn);
        TRL_TL_MANY(std::string, "readTokens", true, readWord(p, var));
    }

    /* -- lines -- */
    void readStringTo(std::string &result) {
        if (reader == nullptr)
            quit(_pe, "Expected line");
        result.clear();
        for (;;) {
            int c = reader->cur();
            if (c == LF || c == EOFC)
                break;
            if (c == CR) {
                c = reader->next();
                if (reader->cur() == LF) {
                    reader->unread(c);
                    break;
                }
            }
            lastLine = reader->line();
            result += char(reader->next());
        }
        if (strict)
            readEoln();
        else
            eoln();
    }
    std::string readString() {
        readStringTo(_tmpReadToken);
        return _tmpReadToken;
    }
    void readStringTo(std::string &r, const pattern &p, const std::string &var = "") {
        readStringTo(r);
        checkPattern(r, p, var, "Line");
    }
    void readStringTo(std::string &r, const std::string &ptrn, const std::string &var = "") {
        readStringTo(r, pattern(ptrn), var);
    }
    std::string readString(const pattern &p, const std::string &var = "") {
        readStringTo(_tmpReadToken, p, var);
        return _tmpReadToken;
    }
    std::string readString(const std::string &ptrn, const std::string &var = "") { return readString(pattern(ptrn), var); }
    void readLineTo(std::string &r) { readStringTo(r); }
    void readLineTo(std::string &r, const pattern &p, const std::string &var = "") { readStringTo(r, p, var); }
    void readLineTo(std::string &r, const std::string &ptrn, const std::string &var = "") { readStringTo(r, ptrn, var); }
    std::string readLine() { return readString(); }
    std::string readLine(const pattern &p, const std::string &var = "") { return readString(p, var); }
    std::string readLine(const std::string &ptrn, const std::string &var = "") { return readString(ptrn, var); }
    std::vector<std::string> readStrings(int size, int indexBase = 1) {
        TRL_TL_MANY(std::string, "readStrings", false, readString());
    }
    std::vector<std::string> readStrings(int size, const pattern &p, const std::string &var = "", int indexBase = 1) {
        TRL_TL_MANY(std::string, "readStrings", false, readString(p, var));
    }
    std::vector<std::string> readStrings(int size, const std::string &ptrn, const std::string &var = "",
                                         int indexBase = 1) {
        pattern p(ptrn);
        TRL_TL_MANY(std::string, "readStrings", false, readString(p, var));
    }
    std::vector<std::string> readLines(int size, int indexBase = 1) {
        TRL_TL_MANY(std::string, "readLines", false, readString());
    }
    std::vector<std::string> readLines(int size, const pattern &p, const std::string &var = "", int indexBase = 1) {
        TRL_TL_MANY(std::string, "readLines", false, readString(p, var));
    }
    std::vector<std::string> readLines(int size, const std::string &ptrn, const std::string &var = "",
                                       int indexBase = 1) {
        pattern p(ptrn);
        TRL_TL_MANY(std::string, "readLines", false, readString(p, var));
    }
#undef TRL_TL_MANY

    /* -- token parsing, with testlib's rules -- */
    long long parseLong(const std::string &tok) {
        std::string shown = trl_tl::shortPart(tok);
        if (tok.find('\0') != std::string::npos)
            quit(_pe, ("Expected integer, but \"" + shown + "\" found (it contains \\0)").c_str());
        const std::string bad = "Expected integer, but \"" + shown + "\" found";
        size_t n = tok.size();
        if (n == 0 || n > 20)
            quit(_pe, bad.c_str());
        bool minus = n > 1 && tok[0] == '-';
        size_t i = minus ? 1 : 0;
        int leadingZeros = 0;
        for (size_t k = i; k < n && tok[k] == '0'; k++)
            leadingZeros++;
        unsigned long long mag = 0;
        bool overflow = false;
        for (size_t k = i; k < n; k++) {
            if (tok[k] < '0' || tok[k] > '9')
                quit(_pe, bad.c_str());
            unsigned d = unsigned(tok[k] - '0');
            if (mag > (ULLONG_MAX - d) / 10)
                overflow = true;
            else
                mag = mag * 10 + d;
        }
        unsigned long long limit = minus ? 9223372036854775808ULL : 9223372036854775807ULL;
        if (overflow || mag > limit)
            quit(_pe, bad.c_str());
        long long v = minus ? (long long)(0ULL - mag) : (long long)mag;
        if ((leadingZeros > 0 && (v != 0 || minus)) || leadingZeros > 1)
            quit(_pe, bad.c_str());
        return v;
    }
    unsigned long long parseUnsigned(const std::string &tok) {
        std::string shown = trl_tl::shortPart(tok);
        if (tok.find('\0') != std::string::npos)
            quit(_pe, ("Expected unsigned integer, but \"" + shown + "\" found (it contains \\0)").c_str());
        const std::string bad = "Expected unsigned integer, but \"" + shown + "\" found";
        if (tok.empty() || tok.size() > 20 || (tok.size() > 1 && tok[0] == '0'))
            quit(_pe, bad.c_str());
        unsigned long long v = 0;
        for (char ch : tok) {
            if (ch < '0' || ch > '9')
                quit(_pe, bad.c_str());
            unsigned d = unsigned(ch - '0');
            if (v > (ULLONG_MAX - d) / 10)
                quit(_pe, bad.c_str());
            v = v * 10 + d;
        }
        return v;
    }
    /* the C library's "%lf%s" scan, as testlib uses it: accepted when nothing follows the number */
    static bool scanWhole(const std::string &tok, double &out) {
        std::vector<char> rest(tok.size() + 1, '\0');
        int scanned = std::sscanf(tok.c_str(), "%lf%s", &out, rest.data());
        return scanned == 1 || (scanned == 2 && rest[0] == '\0');
    }
    double parseDouble(const std::string &tok) {
        std::string shown = trl_tl::shortPart(tok);
        if (tok.find('\0') != std::string::npos)
            quit(_pe, ("Expected double, but \"" + shown + "\" found (it contains \\0)").c_str());
        const std::string bad = "Expected double, but \"" + shown + "\" found";
        int digits = 0, minus = 0, plus = 0, points = 0, exps = 0;
        for (char ch : tok) {
            if (ch >= '0' && ch <= '9')
                digits++;
            else if (ch == 'e' || ch == 'E')
                exps++;
            else if (ch == '-')
                minus++;
            else if (ch == '+')
                plus++;
            else if (ch == '.')
                points++;
            else
                quit(_pe, bad.c_str());
        }
        if (digits == 0 || minus > 2 || plus > 2 || points > 1 || exps > 1)
            quit(_pe, bad.c_str());
        double v;
        if (!scanWhole(tok, v) || trl_tl::isNaN(v))
            quit(_pe, bad.c_str());
        return v;
    }
    double parseStrictDouble(const std::string &tok, int minDigits, int maxDigits) {
        std::string shown = trl_tl::shortPart(tok);
        if (tok.find('\0') != std::string::npos)
            quit(_pe, ("Expected double, but \"" + shown + "\" found (it contains \\0)").c_str());
        if (minDigits < 0)
            quit(_fail, "stringToStrictDouble: minAfterPointDigitCount should be non-negative.");
        if (minDigits > maxDigits)
            quit(_fail, "stringToStrictDouble: minAfterPointDigitCount should be less or equal to maxAfterPointDigitCount.");
        const std::string bad = "Expected strict double, but \"" + shown + "\" found";
        size_t n = tok.size();
        if (n == 0 || n > 1000)
            quit(_pe, bad.c_str());
        if (tok[0] != '-' && (tok[0] < '0' || tok[0] > '9'))
            quit(_pe, bad.c_str());
        int point = -1;
        for (size_t i = 1; i + 1 < n; i++) {
            if (tok[i] == '.') {
                if (point > -1)
                    quit(_pe, bad.c_str());
                point = int(i);
            } else if (tok[i] < '0' || tok[i] > '9')
                quit(_pe, bad.c_str());
        }
        if (tok[n - 1] < '0' || tok[n - 1] > '9')
            quit(_pe, bad.c_str());
        int after = point == -1 ? 0 : int(n) - point - 1;
        if (after < minDigits || after > maxDigits)
            quit(_pe, ("Expected strict double with number of digits after point in range [" + vtos(minDigits) + "," +
                       vtos(maxDigits) + "], but \"" + shown + "\" found")
                          .c_str());
        int first = -1;
        for (size_t i = 0; i < n; i++)
            if (tok[i] >= '0' && tok[i] <= '9') {
                first = int(i);
                break;
            }
        if (first > 1 || first == -1)
            quit(_pe, bad.c_str());
        if (tok[size_t(first)] == '0' && first + 1 < int(n) && tok[size_t(first) + 1] >= '0' && tok[size_t(first) + 1] <= '9')
            quit(_pe, bad.c_str());
        double v;
        if (!scanWhole(tok, v))
            quit(_pe, ("Expected double, but \"" + shown + "\" found").c_str());
        if (trl_tl::isNaN(v) || trl_tl::isHuge(v))
            quit(_pe, ("Expected double, but \"" + shown + "\" found").c_str());
        if (tok[0] == '-' && v >= 0)
            quit(_pe, ("Redundant minus in \"" + shown + "\" found").c_str());
        return v;
    }

    /* -- verdicts -- */
    TRL_TL_NORETURN void quit(TResult result, const char *msg);
    TRL_TL_NORETURN void quitf(TResult result, const char *msg, ...) TRL_TL_PRINTF(3, 4) {
        va_list ap;
        va_start(ap, msg);
        std::string m = trl_tl::vformat(msg, ap);
        va_end(ap);
        quit(result, m.c_str());
    }
    void quitif(bool condition, TResult result, const char *msg, ...) TRL_TL_PRINTF(4, 5) {
        if (!condition)
            return;
        va_list ap;
        va_start(ap, msg);
        std::string m = trl_tl::vformat(msg, ap);
        va_end(ap);
        quit(result, m.c_str());
    }
    TRL_TL_NORETURN void quits(TResult result, std::string msg) { quit(result, msg.c_str()); }
    void ensuref(bool cond, const char *fmt, ...) TRL_TL_PRINTF(3, 4) {
        if (cond)
            return;
        va_list ap;
        va_start(ap, fmt);
        std::string m = trl_tl::vformat(fmt, ap);
        va_end(ap);
        quit(_wa, m.c_str());
    }
    /* target of the ensure() macro when called on a stream: a failed condition is the stream's fault */
    void __testlib_ensure(bool cond, std::string message) {
        if (!cond)
            quit(_wa, message.c_str());
    }
    static void textColor(int color) {
        if (!isatty(2))
            return;
        static const char *codes[] = {"\033[0m", "\033[1;31m", "\033[1;36m", "\033[1;32m", "\033[1;33m"};
        std::fputs(codes[color >= 0 && color <= 4 ? color : 0], stderr);
    }
};

InStream inf;
InStream ouf;
InStream ans;
std::fstream tout;
random_t rnd;
bool appesMode = false;
std::string resultName;
std::string checkerName = "untitled checker";
TTestlibMode testlibMode = _unknown;

/* ---------------------------------------------------------------- quitting */
inline int resultExitCode(TResult r) {
    switch (r) {
        case _ok: return OK_EXIT_CODE;
        case _wa: return WA_EXIT_CODE;
        case _pe: return PE_EXIT_CODE;
        case _fail: return FAIL_EXIT_CODE;
        case _dirt: return DIRT_EXIT_CODE;
        case _points: return POINTS_EXIT_CODE;
#ifdef ENABLE_UNEXPECTED_EOF
        case _unexpected_eof: return UNEXPECTED_EOF_EXIT_CODE;
#else
        case _unexpected_eof: return PE_EXIT_CODE;
#endif
        default: return r >= _partially ? PC_BASE_EXIT_CODE + (r - _partially) : FAIL_EXIT_CODE;
    }
}

TRL_TL_NORETURN inline void halt(int exitCode) {
    if (trl_tl::st().finalizing) {
        std::fflush(nullptr);
        std::_Exit(exitCode);
    }
    std::exit(exitCode);
}

namespace trl_tl {
inline void xmlEscaped(std::FILE *f, const std::string &m) {
    for (char c : m) {
        switch (c) {
            case '&': std::fputs("&amp;", f); break;
            case '<': std::fputs("&lt;", f); break;
            case '>': std::fputs("&gt;", f); break;
            case '"': std::fputs("&quot;", f); break;
            default: std::fputc(c >= 0 && c <= 31 ? '.' : c, f);
        }
    }
}
static const char *const OUTCOME_NAMES[] = {"accepted", "wrong-answer", "presentation-error", "fail", "fail",
#ifndef PCMS2
                                            "points",
#else
                                            "relative-scoring",
#endif
                                            "reserved", "reserved", "unexpected-eof"};
}  // namespace trl_tl

inline void InStream::quit(TResult result, const char *msg) {
    trl_tl::State &S = trl_tl::st();
    if (S.guardAlive)
        S.quitCount++;
    std::string message = trim(msg);
    if (S.hasTestCase) {
        if (result != _ok && result != _points)
            message = trl_tl::appendNote(message, "test case " + vtos(S.testCase));
        else
            message = trl_tl::appendNote(message, vtos(S.testCase) + (S.testCase == 1 ? " test case" : " test cases"));
    }
    if (message.size() > maxMessageLength) {
        std::string warn = "message length exceeds " + vtos(maxMessageLength) + ", the message is truncated: ";
        message = warn + message.substr(0, maxMessageLength - warn.size());
    }
#ifndef ENABLE_UNEXPECTED_EOF
    if (result == _unexpected_eof)
        result = _pe;
#endif
    if (testlibMode == _scorer && result != _fail)
        quits(_fail, "Scorer should return points only. Don't use a quit function.");
    /* only the participant's output can be wrong: any other stream failing is the jury's problem */
    if (mode != _output && result != _fail) {
        std::string blamed = trl_tl::appendNote(message, name);
        if (mode == _input && testlibMode == _validator && lastLine != -1)
            blamed = trl_tl::appendNote(blamed, "line " + vtos(lastLine));
        quits(_fail, blamed);
    }
    if ((result == _ok || result == _points || result >= _partially) && testlibMode != _interactor && !ouf.seekEof())
        ouf.quit(_dirt, "Extra information in the output file");

    std::string title;
    int color = LightRed;
    bool partial = false;
    int pctype = int(result) - int(_partially);
    switch (result) {
        case _ok: title = "ok "; color = LightGreen; break;
        case _wa: title = "wrong answer "; break;
        case _pe: title = "wrong output format "; break;
        case _fail: title = "FAIL "; break;
        case _dirt: title = "wrong output format "; color = LightCyan; result = _pe; break;
        case _points: title = "points "; color = LightYellow; break;
        case _unexpected_eof: title = "unexpected eof "; color = LightCyan; break;
        default:
            if (result < _partially)
                quit(_fail, "What is the code ??? ");
            title = "partially correct (" + vtos(pctype) + ") ";
            color = LightYellow;
            partial = true;
    }
    std::string shown = trl_tl::printable(message);
    if (!resultName.empty()) {
        std::FILE *f = std::fopen(resultName.c_str(), "w");
        if (f == nullptr) {
            resultName.clear();
            quit(_fail, "Can not write to the result file");
        }
        if (appesMode) {
            std::fprintf(f, "<?xml version=\"1.0\" encoding=\"%s\"?>", S.appesEncoding.c_str());
            if (partial)
                std::fprintf(f, "<result outcome = \"partially-correct\" pctype = \"%d\">", pctype);
            else if (result != _points)
                std::fprintf(f, "<result outcome = \"%s\">",
                             int(result) <= 8 ? trl_tl::OUTCOME_NAMES[int(result)] : "reserved");
            else {
                if (S.points == std::numeric_limits<float>::infinity())
                    quit(_fail, "Expected points, but infinity found");
                std::fprintf(f, "<result outcome = \"%s\" points = \"%s\">", trl_tl::OUTCOME_NAMES[_points],
                             trl_tl::trimZeroes(testlib_format_("%.10f", S.points)).c_str());
            }
            trl_tl::xmlEscaped(f, shown);
            std::fprintf(f, "</result>\n");
        } else
            std::fprintf(f, "%s", shown.c_str());
        if (std::fclose(f) != 0) {
            resultName.clear();
            quit(_fail, "Can not write to the result file");
        }
    } else {
        textColor(color);
        std::fprintf(stderr, "%s", title.c_str());
        textColor(LightGray);
        std::fprintf(stderr, "%s", shown.c_str());
    }
    std::fprintf(stderr, "\n");
    inf.close();
    ouf.close();
    ans.close();
    if (tout.is_open())
        tout.close();
    textColor(LightGray);
    if (!resultName.empty())
        std::fprintf(stderr, "See file to check exit message\n");
    halt(resultExitCode(result));
}

namespace trl_tl {
inline void failNow(const std::string &message) { ouf.quit(_fail, message.c_str()); }
}  // namespace trl_tl

inline void quit(TResult result, const char *msg) { ouf.quit(result, msg); }
inline void quit(TResult result, const std::string &msg) { ouf.quit(result, msg.c_str()); }
inline void quitf(TResult result, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    std::string m = trl_tl::vformat(fmt, ap);
    va_end(ap);
    ouf.quit(result, m.c_str());
}
inline void quitif(bool condition, TResult result, const char *fmt, ...) TRL_TL_PRINTF(3, 4);
inline void quitif(bool condition, TResult result, const char *fmt, ...) {
    if (!condition)
        return;
    va_list ap;
    va_start(ap, fmt);
    std::string m = trl_tl::vformat(fmt, ap);
    va_end(ap);
    ouf.quit(result, m.c_str());
}

namespace trl_tl {
inline double checkedPoints(double p) {
    volatile double v = p;
    if (isNaN(v))
        quit(_fail, "Parameter 'points' can't be nan");
    if (isHuge(v))
        quit(_fail, "Parameter 'points' can't be infinite");
    if (v < -1E-8)
        quit(_fail, "Parameter 'points' can't be negative");
    if (v <= 0.0)
        v = +0.0;
    if (v > 1E6 + 1E-8)
        quit(_fail, "Parameter 'points' can't be greater than 1E6");
    if (v >= 1E6)
        v = 1E6;
    return v;
}
TRL_TL_NORETURN inline void pointsQuit(const std::string &shownPoints, const std::string &message) {
    quit(_points, message.empty() ? shownPoints : shownPoints + " " + message);
}
}  // namespace trl_tl

TRL_TL_NORETURN inline void quitp(double points, const std::string &message = "") {
    trl_tl::st().points = trl_tl::checkedPoints(points);
    trl_tl::pointsQuit(trl_tl::trimZeroes(testlib_format_("%.10f", trl_tl::st().points)), message);
}
TRL_TL_NORETURN inline void quitp(float points, const std::string &message = "") { quitp(double(points), message); }
TRL_TL_NORETURN inline void quitp(long double points, const std::string &message = "") {
    quitp(double(points), message);
}
TRL_TL_NORETURN inline void quitp(int points, const std::string &message = "") {
    trl_tl::st().points = trl_tl::checkedPoints(points);
    trl_tl::pointsQuit(vtos(points), message);
}
template <typename F> TRL_TL_NORETURN void quitp(F points, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    std::string m = trl_tl::vformat(fmt, ap);
    va_end(ap);
    quitp(points, m);
}
TRL_TL_NORETURN inline void quitpi(const std::string &pointsInfo, const std::string &message = "") {
    if (pointsInfo.find(' ') != std::string::npos)
        quit(_fail, "Parameter 'points_info' can't contain spaces");
    quit(_points, "points_info=" + pointsInfo + (message.empty() ? "" : " " + message));
}

/* ---------------------------------------------------------------- ensure */
static inline void __testlib_ensure(bool cond, const std::string &msg) {
    if (!cond)
        quit(_fail, msg.c_str());
}
#define ensure(cond) __testlib_ensure((cond), "Condition failed: \"" #cond "\"")
#define TRL_TL_STR2(x) #x
#define TRL_TL_STR(x) TRL_TL_STR2(x)
#define ensure_ext(cond) __testlib_ensure((cond), "Line " TRL_TL_STR(__LINE__) ": Condition failed: \"" #cond "\"")

inline void ensuref(bool cond, const char *fmt, ...) TRL_TL_PRINTF(2, 3);
inline void ensuref(bool cond, const char *fmt, ...) {
    if (cond)
        return;
    va_list ap;
    va_start(ap, fmt);
    std::string m = trl_tl::vformat(fmt, ap);
    va_end(ap);
    quit(_fail, m.c_str());
}

/* ---------------------------------------------------------------- free parsing helpers */
static inline long long stringToLongLong(InStream &in, const std::string &s) { return in.parseLong(s); }
static inline long long stringToLongLong(InStream &in, const char *s) { return in.parseLong(std::string(s)); }
static inline unsigned long long stringToUnsignedLongLong(InStream &in, const std::string &s) {
    return in.parseUnsigned(s);
}
static inline unsigned long long stringToUnsignedLongLong(InStream &in, const char *s) {
    return in.parseUnsigned(std::string(s));
}
static inline double stringToDouble(InStream &in, const std::string &s) { return in.parseDouble(s); }
static inline double stringToDouble(InStream &in, const char *s) { return in.parseDouble(std::string(s)); }
static inline double stringToStrictDouble(InStream &in, const std::string &s, int minD, int maxD) {
    return in.parseStrictDouble(s, minD, maxD);
}
static inline double stringToStrictDouble(InStream &in, const char *s, int minD, int maxD) {
    return in.parseStrictDouble(std::string(s), minD, maxD);
}
static inline bool equals(long long value, const char *s) { return vtos(value) == s; }
static inline bool equals(unsigned long long value, const char *s) { return vtos(value) == s; }

/* ---------------------------------------------------------------- test cases, testset, group */
inline void setTestCase(int testCase) {
    static bool first = true, zeroBased = false;
    if (first && testCase == 0)
        zeroBased = true;
    first = false;
    trl_tl::st().hasTestCase = true;
    trl_tl::st().testCase = zeroBased ? testCase + 1 : testCase;
}
inline void unsetTestCase() {
    trl_tl::st().hasTestCase = false;
    trl_tl::st().testCase = -1;
}
inline std::string getTestset() { return trl_tl::st().testset; }
inline std::string getGroup() { return trl_tl::st().group; }

struct TrlTestlibRunInfo {
    std::string set = "tests", grp;
    bool ready = false;
    std::string testset() const { return set; }
    std::string group() const { return grp; }
    void setTestset(const char *t) { set = t; }
    void setGroup(const char *g) { grp = g; }
};
/* validator.testset()/group() and checker.testset()/group(), as testlib offers them */
struct TrlTestlibValidator : TrlTestlibRunInfo {
    void addFeature(const std::string &) {}
    void feature(const std::string &) {}
    void setTestOverviewLogFileName(const char *) {}
    void setTestMarkupFileName(const char *) {}
    void setTestCaseFileName(const char *) {}
    void setTestCase(int) {}
} validator;
TrlTestlibRunInfo checker;
inline void addFeature(const std::string &) {
    if (testlibMode != _validator)
        quit(_fail, "Features are supported in validators only.");
}
inline void feature(const std::string &) {
    if (testlibMode != _validator)
        quit(_fail, "Features are supported in validators only.");
}

inline void setName(const char *fmt, ...) TRL_TL_PRINTF(1, 2);
inline void setName(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    checkerName = trl_tl::vformat(fmt, ap);
    va_end(ap);
}
inline void setAppesModeEncoding(std::string enc) { trl_tl::st().appesEncoding = lowerCase(enc); }
inline void disableFinalizeGuard() { trl_tl::st().guardAlive = false; }

/* ---------------------------------------------------------------- finalization */
/* At exit: a checker that never gave a verdict, or a validator that never reached readEof, fails (as
 * testlib's finalize guard does). Defined after the streams so that it runs before they are destroyed. */
struct TrlTestlibFinalizer {
    ~TrlTestlibFinalizer() {
        trl_tl::State &S = trl_tl::st();
        bool alive = S.guardAlive;
        S.guardAlive = false;
        if (!alive)
            return;
        S.finalizing = true;
        if (testlibMode == _checker && S.quitCount == 0)
            trl_tl::failNow("Checker must end with quit or quitf call.");
        if (testlibMode == _validator && S.readEofCount == 0 && S.quitCount == 0)
            trl_tl::failNow("Validator must end with readEof call.");
        if (!S.registered)
            trl_tl::failNow("Call register-function in the first line of the main (registerTestlibCmd or other similar)");
    }
} trlTestlibFinalizer;

/* ---------------------------------------------------------------- registration */
namespace trl_tl {
inline void preconditions() {
    static_assert(sizeof(int) == 4 && sizeof(long long) == 8 && sizeof(double) == 8, "testlib's type sizes");
    volatile double zero = 0.0;
    double nan = zero / zero;
    if (!isNaN(nan))
        quit(_fail, "Function __testlib_isNaN is not working correctly: possible reason is '-ffast-math'");
}
inline void readTestsetAndGroup(int argc, char *argv[]) {
    for (int i = 1; i < argc; i++) {
        if (!std::strcmp(argv[i], "--testset")) {
            if (i + 1 < argc && std::strlen(argv[i + 1]) > 0)
                st().testset = argv[++i];
            else
                quit(_fail, std::string("Expected non-empty testset after --testset command line parameter"));
        } else if (!std::strcmp(argv[i], "--group")) {
            if (i + 1 < argc)
                st().group = argv[++i];
            else
                quit(_fail, std::string("Expected group after --group command line parameter"));
        }
    }
}
inline void reportArgs(const std::vector<std::string> &args, size_t reportAt) {
    resultName.clear();
    appesMode = false;
    if (args.size() == reportAt + 1)
        resultName = args[reportAt];
    if (args.size() == reportAt + 2) {
        if (args[reportAt + 1] != "-APPES" && args[reportAt + 1] != "-appes")
            quit(_fail, std::string("Program must be run with the following arguments: ") +
                            "<input-file> <output-file> <answer-file> [<report-file> [<-appes>]]");
        resultName = args[reportAt];
        appesMode = true;
    }
}
TRL_TL_NORETURN inline void help() {
    std::fprintf(stderr, "trl-sandbox testlib-compatible header (own implementation of testlib's API)\n");
    std::fprintf(stderr, "Checker name: \"%s\"\n", checkerName.c_str());
    halt(0);
}
}  // namespace trl_tl

/* Checker: <input> <output> <answer> [<report> [-appes]], plus optional --testset/--group. */
inline void registerTestlibCmd(int argc, char *argv[]) {
    trl_tl::preconditions();
    trl_tl::readTestsetAndGroup(argc, argv);
    trl_tl::st().registered = true;
    testlibMode = _checker;
    std::vector<std::string> args(1, argv[0]);
    for (int i = 1; i < argc; i++) {
        if (!std::strcmp(argv[i], "--testset")) {
            if (i + 1 < argc && std::strlen(argv[i + 1]) > 0)
                checker.setTestset(argv[++i]);
            else
                quit(_fail, std::string("Expected testset after --testset command line parameter"));
        } else if (!std::strcmp(argv[i], "--group")) {
            if (i + 1 < argc)
                checker.setGroup(argv[++i]);
            else
                quit(_fail, std::string("Expected group after --group command line parameter"));
        } else
            args.push_back(argv[i]);
    }
    if (args.size() > 1 && args[1] == "--help")
        trl_tl::help();
    if (args.size() < 4 || args.size() > 6)
        quit(_fail, std::string("Program must be run with the following arguments: ") +
                        "[--testset testset] [--group group] <input-file> <output-file> <answer-file> "
                        "[<report-file> [<-appes>]]\nUse \"--help\" to get help information");
    trl_tl::reportArgs(args, 4);
    inf.init(args[1], _input);
    ouf.init(args[2], _output);
    ouf.skipBom();
    ans.init(args[3], _answer);
}

inline void registerTestlib(int argc, ...) {
    std::vector<char *> argv(1, nullptr);
    va_list ap;
    va_start(ap, argc);
    for (int i = 0; i < argc; i++)
        argv.push_back(va_arg(ap, char *));
    va_end(ap);
    registerTestlibCmd(argc + 1, argv.data());
}

/* Interactor: <input> <test-output> [<answer> [<report> [-appes]]]; the program's output is stdin. */
inline void registerInteraction(int argc, char *argv[]) {
    trl_tl::preconditions();
    trl_tl::readTestsetAndGroup(argc, argv);
    trl_tl::st().registered = true;
    testlibMode = _interactor;
    if (argc > 1 && !std::strcmp(argv[1], "--help"))
        trl_tl::help();
    if (argc < 3 || argc > 6)
        quit(_fail, std::string("Program must be run with the following arguments: ") +
                        "<input-file> <output-file> [<answer-file> [<report-file> [<-appes>]]]" +
                        "\nUse \"--help\" to get help information");
    std::vector<std::string> args(argv, argv + argc);
    trl_tl::reportArgs(args, 4);
    inf.init(args[1], _input);
    tout.open(args[2].c_str(), std::ios_base::out);
    if (tout.fail() || !tout.is_open())
        quit(_fail, "Can not write to the test-output-file '" + args[2] + "'");
    ouf.init(stdin, _output);
    if (argc >= 4)
        ans.init(args[3], _answer);
    else
        ans.name = "unopened answer stream";
}

/* Validator: reads stdin strictly (exact spaces and line ends). */
inline void registerValidation() {
    trl_tl::preconditions();
    trl_tl::st().registered = true;
    testlibMode = _validator;
    inf.init(stdin, _input);
    inf.strict = true;
}
inline void registerValidation(int argc, char *argv[]) {
    registerValidation();
    trl_tl::readTestsetAndGroup(argc, argv);
    const std::string usage = "Validator must be run with the following arguments: [--testset testset] [--group group]"
                              " [--testOverviewLogFileName fileName] [--testMarkupFileName fileName]"
                              " [--testCase testCase] [--testCaseFileName fileName]";
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        bool needsValue = a == "--testset" || a == "--group" || a == "--testOverviewLogFileName" ||
                          a == "--testMarkupFileName" || a == "--testCase" || a == "--testCaseFileName";
        if (!needsValue)
            continue;
        if (i + 1 >= argc || (a == "--testset" && std::strlen(argv[i + 1]) == 0))
            quit(_fail, usage);
        const char *v = argv[++i];
        if (a == "--testset")
            validator.setTestset(v);
        else if (a == "--group")
            validator.setGroup(v);
        else if (a == "--testCase") {
            long long tc = stringToLongLong(inf, v);
            if (tc < 1 || tc >= 1073741823)
                quit(_fail, "Argument testCase should be between 1 and 1073741823, but " + vtos(tc) + " found");
        }
    }
}

/* ---------------------------------------------------------------- generators */
namespace trl_tl {
struct Opts {
    std::vector<std::string> argv;
    std::map<std::string, std::string> named;
};
inline Opts &opts() {
    static Opts *o = new Opts();
    return *o;
}
inline void prepareOpts(int argc, char *argv[]) {
    Opts &o = opts();
    o.argv.assign(argv, argv + argc);
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if (a.size() < 2 || a[0] != '-' || (a[1] >= '0' && a[1] <= '9') || a[1] == '.')
            continue;
        std::string key = a.substr(a[1] == '-' ? 2 : 1);
        size_t eq = key.find('=');
        if (eq != std::string::npos)
            o.named[key.substr(0, eq)] = key.substr(eq + 1);
        else if (i + 1 < argc)
            o.named[key] = argv[++i];
        else
            o.named[key] = "true";
    }
}
template <typename T> T convert(const std::string &s, std::true_type /*integral*/) {
    char *end = nullptr;
    double d = std::strtod(s.c_str(), &end);
    if (s.empty() || *end != '\0')
        failNow("Opts: expected integer but '" + compress(s) + "' found");
    long long v = std::strtoll(s.c_str(), &end, 10);
    if (*end != '\0')
        v = (long long)d;  // exponential notation such as 1e5
    return T(v);
}
template <typename T> T convert(const std::string &s, std::false_type) {
    std::istringstream is(s);
    T v;
    is >> v;
    return v;
}
template <typename T> T fromText(const std::string &s) {
    return convert<T>(s, std::integral_constant<bool, std::is_integral<T>::value && !std::is_same<T, bool>::value>());
}
template <> inline std::string fromText<std::string>(const std::string &s) { return s; }
template <> inline bool fromText<bool>(const std::string &s) { return s == "true" || s == "1"; }
}  // namespace trl_tl

inline bool has_opt(const std::string &key) { return trl_tl::opts().named.count(key) != 0; }
template <typename T> T opt(const std::string &key) {
    std::map<std::string, std::string>::const_iterator it = trl_tl::opts().named.find(key);
    if (it == trl_tl::opts().named.end())
        trl_tl::failNow("Opts: unknown key '" + compress(key) + "'");
    return trl_tl::fromText<T>(it->second);
}
template <typename T> T opt(const std::string &key, const T &fallback) {
    return has_opt(key) ? opt<T>(key) : fallback;
}
inline std::string opt(const std::string &key, const char *fallback) {
    return has_opt(key) ? opt<std::string>(key) : std::string(fallback);
}
template <typename T> T opt(int index) {
    if (index < 0 || index >= int(trl_tl::opts().argv.size()))
        trl_tl::failNow("Opts: index '" + vtos(index) + "' is out of range [0," + vtos(trl_tl::opts().argv.size()) + ")");
    return trl_tl::fromText<T>(trl_tl::opts().argv[size_t(index)]);
}
inline std::string opt(int index) { return opt<std::string>(index); }
inline std::string opt(const std::string &key) { return opt<std::string>(key); }
inline void suppressEnsureNoUnusedOpts() {}
inline void ensureNoUnusedOpts() {}

inline void registerGen(int argc, char *argv[], int randomGeneratorVersion) {
    if (randomGeneratorVersion < 0 || randomGeneratorVersion > 1)
        quitf(_fail, "Random generator version is expected to be 0 or 1.");
    random_t::version = randomGeneratorVersion;
    trl_tl::preconditions();
    trl_tl::st().registered = true;
    testlibMode = _generator;
    rnd.setSeed(argc, argv);
    trl_tl::prepareOpts(argc, argv);
}
inline void registerGen(int argc, char *argv[]) { registerGen(argc, argv, 0); }

template <typename It> void shuffle(It first, It last) {
    if (first == last)
        return;
    for (It i = first + 1; i != last; ++i)
        std::iter_swap(i, first + rnd.next(int(i - first) + 1));
}

inline void startTest(int test) {
    std::string fileName = vtos(test);
    if (std::freopen(fileName.c_str(), "wt", stdout) == nullptr)
        trl_tl::failNow("Unable to write file '" + fileName + "'");
}

/* println: values separated by single spaces, a container or iterator range element by element. */
namespace trl_tl {
template <typename T> struct IsContainer {
    template <typename U> static char test(typename U::const_iterator *);
    template <typename U> static long test(...);
    static const bool value = sizeof(test<T>(nullptr)) == 1 && !std::is_same<T, std::string>::value;
};
template <typename T> void put(const T &x, std::false_type) { std::cout << x; }
template <typename T> void put(const T &x, std::true_type) {
    bool first = true;
    for (const auto &e : x) {
        if (!first)
            std::cout << ' ';
        first = false;
        std::cout << e;
    }
}
template <typename T> void putOne(const T &x) { put(x, std::integral_constant<bool, IsContainer<T>::value>()); }
inline void putAll() {}
template <typename T, typename... R> void putAll(const T &x, const R &...rest) {
    std::cout << ' ';
    putOne(x);
    putAll(rest...);
}
}  // namespace trl_tl

template <typename T> void println(const T &x) {
    trl_tl::putOne(x);
    std::cout << std::endl;
}
template <typename T, typename... R> void println(const T &x, const R &...rest) {
    trl_tl::putOne(x);
    trl_tl::putAll(rest...);
    std::cout << std::endl;
}
template <typename A> void println(const A *first, const A *last) {
    for (const A *p = first; p != last; ++p) {
        if (p != first)
            std::cout << ' ';
        std::cout << *p;
    }
    std::cout << std::endl;
}
inline void println(const char *s) { std::cout << s << std::endl; }

#endif /* TRL_SANDBOX_TESTLIB_H */
