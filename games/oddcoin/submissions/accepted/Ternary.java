import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;

/** Three-way split: two equal pans and the rest aside. ceil(log3 N) weighings. */
public class Ternary {
    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        long n = Long.parseLong(in.readLine().trim());
        long lo = 1, hi = n;
        while (lo < hi) {
            long k = (hi - lo + 3) / 3;
            StringBuilder query = new StringBuilder("? ").append(k);
            for (long c = lo; c < lo + 2 * k; c++) query.append(' ').append(c);
            System.out.println(query);
            System.out.flush();
            String reply = in.readLine().trim();
            if (reply.equals(">")) {
                hi = lo + k - 1;
            } else if (reply.equals("<")) {
                lo += k;
                hi = lo + k - 1;
            } else {
                lo += 2 * k;
            }
        }
        System.out.println("! " + lo);
        System.out.flush();
    }
}
