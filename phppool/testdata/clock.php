<?php
// When the worker started this request (monotonic ns), to order requests.
echo hrtime(true);
