/* A stand-in libnvidia-ml.so.1 with one K80 board (two GPUs) that, like the 470 branch, lacks
 * nvmlDeviceGetNumaNodeId and nvmlDeviceGetNvLinkRemoteDeviceType. For checking the real JavaCPP path on a
 * machine without a GPU; see nvml/README.md ("Checking the native path without a GPU"). */
#include <string.h>
#include <stdio.h>
#include <unistd.h>
typedef struct { char busIdLegacy[16]; unsigned domain, bus, device, pciDeviceId, pciSubSystemId; char busId[32]; } pci_t;
typedef struct { unsigned long long total, free, used; } mem_t;
typedef struct { void *device; unsigned long long eventType, eventData; unsigned gi, ci; } ev_t;
static int devs[2];
int nvmlInit_v2(void) { return 0; }
int nvmlShutdown(void) { return 0; }
const char *nvmlErrorString(int rc) { return rc == 3 ? "Not Supported" : rc == 10 ? "Timeout" : "Unknown Error"; }
int nvmlSystemGetDriverVersion(char *v, unsigned n) { snprintf(v, n, "470.256.02"); return 0; }
int nvmlSystemGetCudaDriverVersion_v2(int *v) { *v = 11040; return 0; }
int nvmlDeviceGetCount_v2(unsigned *c) { *c = 2; return 0; }
int nvmlDeviceGetHandleByIndex_v2(unsigned i, void **h) { if (i > 1) return 2; *h = &devs[i]; return 0; }
static int idx(void *h) { return h == &devs[0] ? 0 : 1; }
int nvmlDeviceGetUUID(void *h, char *u, unsigned n) { snprintf(u, n, "GPU-fake0000-0000-0000-0000-00000000000%d", idx(h)); return 0; }
int nvmlDeviceGetName(void *h, char *u, unsigned n) { snprintf(u, n, "Tesla K80"); return 0; }
int nvmlDeviceGetCudaComputeCapability(void *h, int *ma, int *mi) { *ma = 3; *mi = 7; return 0; }
int nvmlDeviceGetMemoryInfo(void *h, mem_t *m) { m->total = 11441ULL << 20; m->free = m->total; m->used = 0; return 0; }
int nvmlDeviceGetPciInfo_v3(void *h, pci_t *p) { memset(p, 0, sizeof *p); snprintf(p->busId, 32, "00000000:%02X:00.0", 0x84 + idx(h)); return 0; }
int nvmlDeviceGetTopologyCommonAncestor(void *a, void *b, int *l) { *l = 0; return 0; }
int nvmlDeviceGetNvLinkState(void *h, unsigned l, int *s) { return 3; }
int nvmlDeviceGetNvLinkRemotePciInfo_v2(void *h, unsigned l, pci_t *p) { return 3; }
int nvmlEventSetCreate(void **s) { *s = &devs[0]; return 0; }
int nvmlDeviceGetSupportedEventTypes(void *h, unsigned long long *t) { *t = 0x8 | 0x2; return 0; }
int nvmlDeviceRegisterEvents(void *h, unsigned long long t, void *s) { return 0; }
int nvmlEventSetWait_v2(void *s, ev_t *d, unsigned ms) { usleep(ms * 1000); return 10; }
int nvmlEventSetFree(void *s) { return 0; }
/* Reset evidence: a K80 has ECC and page retirement, but no row remapper (Ampere and newer). */
int nvmlDeviceGetTotalEccErrors(void *h, int type, int counter, unsigned long long *c) { *c = 0; return 0; }
int nvmlDeviceGetRetiredPagesPendingStatus(void *h, int *state) { *state = 0; return 0; }
int nvmlDeviceGetRemappedRows(void *h, unsigned *corr, unsigned *unc, unsigned *pending, unsigned *failed) { return 3; }
