// Alloc is the JVM the live tests read: for each line "alloc MS" on its
// stdin it allocates short-lived arrays for MS milliseconds (so its
// collectors run) and prints "done"; it ends at end of input.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.ArrayList;
import java.util.List;

public class Alloc {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        System.out.println("ready");
        System.out.flush();
        List<byte[]> keep = new ArrayList<>();
        String line;
        while ((line = in.readLine()) != null) {
            String[] f = line.trim().split(" ");
            if (f.length != 2 || !f[0].equals("alloc")) {
                continue;
            }
            long end = System.currentTimeMillis() + Long.parseLong(f[1]);
            while (System.currentTimeMillis() < end) {
                keep.add(new byte[64 * 1024]);
                if (keep.size() > 200) {
                    keep.clear();
                }
            }
            System.out.println("done");
            System.out.flush();
        }
    }
}
