/* bcryptprimitives.dll for the wine test prefix only: Go's Windows runtime
 * (Go 1.22 and newer, for Windows 10 and newer) takes its random bytes from
 * ProcessPrng in bcryptprimitives.dll, which every Windows 10 has and
 * Debian bookworm's wine 8.0 lacks. This stand-in answers from RtlGenRandom
 * (advapi32's SystemFunction036). It is never shipped. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
	while (length > 0) {
		ULONG n = length > 0x10000000 ? 0x10000000 : (ULONG)length;
		if (!SystemFunction036(data, n))
			return FALSE;
		data += n;
		length -= n;
	}
	return TRUE;
}
