//===- MutationDriver.cpp - The project's own fuzz driver -------*- C++ -*-===//
//
// A small mutation fuzzer around ftpipeFuzzOne, for builds without
// libFuzzer (gcc): it runs every seed, then mutated copies of the seeds
// (byte flips, insertions, deletions, repeated chunks, splices of two seeds,
// numbers swapped for boundary values), each under a limit on CPU time (so
// that a loaded, shared machine does not turn slow inputs into findings) and
// a ten times longer one on wall time (an input that blocks). Each input
// runs in a child process (the first parse error of an IR input ends that
// process: FuzzTarget.cpp). On a crash, an abort or a timeout the input is
// written to --crash-dir and the driver dies with the same signal, so a
// test run fails and the input can be replayed:
//   ftpipe-fuzz --replay FILE
// With --keep-going the run goes on past findings, saving each. With
// --memory-limit-mb an input that allocates past the limit is a finding
// ("out of memory") instead of a machine out of memory. The closing lines
// count the inputs run per kind and the findings.
// Seeds are files or directories: .mlir files become IR inputs; .json files
// become artifact-manifest, checkpoint-manifest, cluster, profile, graph or
// model-config inputs by their keys; .safetensors files safetensors inputs;
// .ids files data-value inputs; .csv files schedule-file inputs; .json files
// with a "weight_map" checkpoint-index inputs; .freeze-names files
// ftpipe-compile --freeze=@FILE inputs; .freeze-schedule files ftpipe-run
// --freeze schedule=FILE inputs; .run-settings files ftpipe-run settings
// inputs.
//
//===----------------------------------------------------------------------===//

#include "FuzzTarget.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <csignal>
#include <map>
#include <new>
#include <random>
#include <string>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace cl = llvm::cl;

static cl::list<std::string> seedPaths(cl::Positional,
                                       cl::desc("<seed files or directories>"));
static cl::opt<unsigned> runs("runs", cl::desc("Mutated inputs to run"),
                              cl::init(1000));
static cl::opt<unsigned> maxSeconds(
    "max-seconds",
    cl::desc("Stop after this many seconds of mutations (0: no limit)"),
    cl::init(0));
static cl::opt<unsigned> seed("seed", cl::desc("Random seed"), cl::init(1));
static cl::opt<unsigned> timeoutSeconds(
    "timeout",
    cl::desc("CPU seconds one input may use (and 10 times as many seconds "
             "of wall time)"),
    cl::init(20));
static cl::opt<std::string>
    crashDir("crash-dir", cl::desc("Where a failing input is written"),
             cl::init("."));
static cl::opt<std::string> replay("replay",
                                   cl::desc("Run one saved input and exit"));
static cl::opt<bool>
    keepGoing("keep-going",
              cl::desc("Go on after a finding, saving each failing input as "
                       "ftpipe-fuzz-finding-N.bin"));
static cl::opt<bool> printPipelines(
    "print-pipelines",
    cl::desc("Print the pass pipelines that IR inputs go through, and exit"));
static cl::opt<bool>
    verbose("v", cl::desc("Print each input's size and diagnostics"));
static cl::opt<unsigned> memoryLimitMB(
    "memory-limit-mb",
    cl::desc("Address space one input may use, in MiB: an allocation past it "
             "is a finding ('out of memory'); 0: no limit (sanitizer builds "
             "reserve terabytes of shadow memory)"),
    cl::init(0));

/// The input being run, for the crash handlers.
static std::string current;

static void saveCurrent(void *) {
  llvm::SmallString<256> path(crashDir);
  llvm::sys::path::append(path, "ftpipe-fuzz-crash.bin");
  std::error_code error;
  llvm::raw_fd_ostream os(path, error);
  if (error)
    return;
  os << current;
  os.flush();
  llvm::errs() << "ftpipe-fuzz: the failing input is in " << path << " (kind '"
               << (current.empty() ? ' ' : current[0])
               << "'); replay with --replay\n";
}

static void onTimeout(int signal) {
  llvm::errs() << "ftpipe-fuzz: timeout: one input used more than "
               << (signal == SIGPROF ? timeoutSeconds : 10 * timeoutSeconds)
               << (signal == SIGPROF ? " s of CPU time\n"
                                     : " s of wall time\n");
  std::abort(); // LLVM's handler saves the input and prints the stack
}

/// Arms (or, with 0, disarms) the CPU-time and wall-time limits.
static void setLimits(unsigned cpuSeconds) {
  itimerval cpu = {};
  cpu.it_value.tv_sec = cpuSeconds;
  setitimer(ITIMER_PROF, &cpu, nullptr);
  alarm(10 * cpuSeconds);
}

/// The kind byte of a seed file, or 0 to skip it.
static char kindOf(llvm::StringRef path, llvm::StringRef text) {
  if (path.ends_with(".mlir"))
    return 'I';
  if (path.ends_with(".safetensors"))
    return 'S';
  if (path.ends_with(".ids"))
    return 'V';
  if (path.ends_with(".csv"))
    return 'T';
  if (path.ends_with(".freeze-names"))
    return 'F';
  if (path.ends_with(".freeze-schedule"))
    return 'Z';
  if (path.ends_with(".run-settings"))
    return 'O';
  if (!path.ends_with(".json"))
    return 0;
  if (text.contains("\"ftpipe-manifest\""))
    return 'A';
  if (text.contains("\"ftpipe-checkpoint\""))
    return 'C';
  if (text.contains("\"weight_map\""))
    return 'X';
  if (text.contains("\"model_type\""))
    return 'M';
  if (text.contains("\"nodes\""))
    return 'G';
  if (text.contains("\"fwd_ms\""))
    return 'P';
  if (text.contains("\"devices\"") || text.contains("\"base\""))
    return 'H';
  return 0;
}

static void addSeed(llvm::StringRef path, std::vector<std::string> &seeds) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return;
  llvm::StringRef text = (*buffer)->getBuffer();
  if (char kind = kindOf(path, text))
    seeds.push_back(kind + text.str());
}

static std::vector<std::string> loadSeeds() {
  std::vector<std::string> seeds;
  for (const std::string &root : seedPaths) {
    if (!llvm::sys::fs::is_directory(root)) {
      addSeed(root, seeds);
      continue;
    }
    std::error_code error;
    std::vector<std::string> files;
    for (llvm::sys::fs::recursive_directory_iterator it(root, error), end;
         it != end && !error; it.increment(error))
      if (llvm::sys::fs::is_regular_file(it->path()))
        files.push_back(it->path());
    llvm::sort(files); // the same order, and so the same run, every time
    for (const std::string &file : files)
      addSeed(file, seeds);
  }
  return seeds;
}

/// Boundary values that mutations put in place of numbers.
static const char *const kInteresting[] = {
    "0",     "-1",         "1",    "?",   "4294967296", "18446744073709551615",
    "1e308", "5e-324",     "nan",  "inf", "-0.0",       "9223372036854775807",
    "65536", "2147483648", "[[[[", "}}}}"};

static void mutate(std::string &input, const std::vector<std::string> &seeds,
                   std::mt19937_64 &rng) {
  auto below = [&](size_t n) { return n == 0 ? 0 : size_t(rng() % n); };
  // Byte 0 is the kind: mutate only the rest.
  size_t size = input.size();
  if (size < 2) {
    input += 'x';
    return;
  }
  switch (below(7)) {
  case 0: // flip bits of a byte
    input[1 + below(size - 1)] ^= char(1u << below(8));
    break;
  case 1: // insert a printable byte
    input.insert(input.begin() + 1 + below(size - 1), char(' ' + below(95)));
    break;
  case 2: { // delete a chunk
    size_t at = 1 + below(size - 1);
    input.erase(at, 1 + below(std::min<size_t>(size - at, 64)));
    break;
  }
  case 3: { // repeat a chunk
    size_t at = 1 + below(size - 1);
    std::string chunk = input.substr(at, 1 + below(64));
    size_t times = 1 + below(16);
    for (size_t i = 0; i < times && input.size() < (1u << 20); ++i)
      input.insert(at, chunk);
    break;
  }
  case 4: { // splice in part of another seed of the same kind
    const std::string &other = seeds[below(seeds.size())];
    if (other.size() < 2 || other[0] != input[0])
      break;
    size_t from = 1 + below(other.size() - 1);
    size_t at = 1 + below(size - 1);
    input.replace(at, below(64), other.substr(from, 1 + below(256)));
    break;
  }
  default: { // replace a number with a boundary value
    size_t at = 1 + below(size - 1);
    size_t begin = input.find_first_of("0123456789", at);
    if (begin == std::string::npos)
      begin = input.find_first_of("0123456789", 1);
    if (begin == std::string::npos)
      break;
    size_t end = input.find_first_not_of("0123456789.eE+-", begin);
    if (end == std::string::npos)
      end = input.size();
    input.replace(begin, end - begin,
                  kInteresting[below(std::size(kInteresting))]);
    break;
  }
  }
}

static void runInProcess(const std::string &input) {
  current = input;
  if (memoryLimitMB) {
    rlimit limit = {};
    limit.rlim_cur = limit.rlim_max = rlim_t(memoryLimitMB) << 20;
    setrlimit(RLIMIT_AS, &limit);
    std::set_new_handler([] {
      llvm::errs() << "ftpipe-fuzz: out of memory: one input needed more "
                      "than "
                   << memoryLimitMB << " MiB\n";
      std::abort(); // LLVM's handler saves the input and prints the stack
    });
  }
  if (verbose)
    llvm::errs() << llvm::formatv("input of {0} bytes, kind '{1}'\n",
                                  input.size(), input.empty() ? ' ' : input[0]);
  setLimits(timeoutSeconds);
  ftpipeFuzzOne(reinterpret_cast<const uint8_t *>(input.data()), input.size());
  setLimits(0);
}

static unsigned numFindings = 0;
/// Inputs run, per kind byte.
static std::map<char, unsigned> numByKind;

/// Runs `input` in a child process. Without --keep-going, a finding ends
/// this process as it ended the child (which saved the input).
static void runOne(const std::string &input) {
  llvm::outs().flush();
  llvm::errs().flush();
  ++numByKind[input.empty() ? ' ' : input[0]];
  pid_t child = fork();
  if (child == 0) {
    runInProcess(input);
    _exit(0);
  }
  int status = 0;
  if (child < 0 || waitpid(child, &status, 0) != child) {
    llvm::errs() << "ftpipe-fuzz: cannot run a child process\n";
    std::exit(1);
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
    return;
  if (!keepGoing) {
    if (WIFSIGNALED(status)) {
      std::signal(WTERMSIG(status), SIG_DFL); // not LLVM's handlers
      std::raise(WTERMSIG(status));
    }
    std::exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
  }
  // The first 100 are saved: a common bug would fill the disk.
  if (numFindings++ >= 100)
    return;
  llvm::SmallString<256> path(crashDir);
  llvm::sys::path::append(
      path, llvm::formatv("ftpipe-fuzz-finding-{0}.bin", numFindings).str());
  std::error_code error;
  llvm::raw_fd_ostream os(path, error);
  os << input;
  llvm::errs() << "ftpipe-fuzz: finding " << numFindings << " ("
               << (WIFSIGNALED(status) ? "signal " : "exit ")
               << (WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status))
               << ") saved as " << path << "\n";
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(
      argc, argv,
      "FTPipe's mutation fuzzer: seeds and their mutations through the IR "
      "parser, every pass and the input readers\n");
  if (printPipelines) {
    for (const std::string &pipeline : ftpipeFuzzPipelines())
      llvm::outs() << pipeline << "\n";
    return 0;
  }
  llvm::sys::AddSignalHandler(saveCurrent, nullptr);
  ftpipeFuzzShowDiagnostics = verbose;
  ftpipeFuzzOne(nullptr, 0); // set up once, in this process
  std::signal(SIGALRM, onTimeout);
  std::signal(SIGPROF, onTimeout);

  if (!replay.empty()) {
    llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
        llvm::MemoryBuffer::getFile(replay);
    if (!buffer) {
      llvm::errs() << "ftpipe-fuzz: cannot read '" << replay << "'\n";
      return 1;
    }
    runOne((*buffer)->getBuffer().str());
    llvm::errs() << "ftpipe-fuzz: the input ran without a finding\n";
    return 0;
  }

  std::vector<std::string> seeds = loadSeeds();
  if (seeds.empty()) {
    llvm::errs() << "ftpipe-fuzz: no seeds (give .mlir and .json files or "
                    "directories)\n";
    return 1;
  }
  auto start = std::chrono::steady_clock::now();
  for (const std::string &input : seeds)
    runOne(input);
  std::mt19937_64 rng(seed);
  unsigned done = 0;
  for (; done < runs; ++done) {
    if (maxSeconds && std::chrono::steady_clock::now() - start >
                          std::chrono::seconds(maxSeconds))
      break;
    std::string input = seeds[rng() % seeds.size()];
    for (unsigned n = 1 + rng() % 4; n > 0; --n)
      mutate(input, seeds, rng);
    runOne(input);
  }
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  std::string kinds;
  for (auto [kind, count] : numByKind)
    kinds += llvm::formatv(" {0} {1}", kind, count).str();
  llvm::errs() << "ftpipe-fuzz: inputs by kind (seeds included):" << kinds
               << "\n";
  if (numFindings) {
    llvm::errs() << llvm::formatv("ftpipe-fuzz: {0} seeds and {1} mutated "
                                  "inputs in {2:f1} s, {3} findings\n",
                                  seeds.size(), done, seconds, numFindings);
    return 1;
  }
  llvm::errs() << llvm::formatv("ftpipe-fuzz: {0} seeds and {1} mutated inputs "
                                "in {2:f1} s, no finding\n",
                                seeds.size(), done, seconds);
  return 0;
}
