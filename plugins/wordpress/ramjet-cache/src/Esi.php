<?php
/**
 * Esi: ESI blocks for the admin bar and nonce-bearing shortcodes and widgets.
 *
 * @package RamjetCache
 */

namespace Ramjet\Cache;

/**
 * Replaces parts of a page by `<esi:include>` points that ramjet fills per
 * request, and answers the fragment requests.
 *
 * Blocks: the admin bar (private to its user), and the shortcodes and
 * widgets listed in the settings (forms carrying nonces). A fragment
 * carries its own cache policy: public for anonymous visitors (a nonce for
 * a logged-out visitor is the same for all of them) with a TTL below the
 * nonce lifetime, private for logged-in users. So a cached page stays
 * valid past nonce expiry: only its fragment is refreshed.
 *
 * Fragment URLs are signed (HMAC over the block and its arguments), so
 * nobody can make the site render an arbitrary shortcode or widget.
 * Markup is only emitted when an ESI processor will read it: ESI "on", or
 * "auto" and the request came through ramjet (Request::behind_proxy()).
 */
class Esi {

	/** Query parameter naming the block. */
	const PARAM = 'ramjet_esi';

	/**
	 * Settings.
	 *
	 * @var Settings
	 */
	private $settings;

	/**
	 * Tags.
	 *
	 * @var Tags
	 */
	private $tags;

	/**
	 * The current request.
	 *
	 * @var Request
	 */
	private $request;

	/**
	 * HMAC key for fragment URLs.
	 *
	 * @var string
	 */
	private $key;

	/**
	 * Whether this page emitted an include.
	 *
	 * @var bool
	 */
	private $used = false;

	/**
	 * Whether a fragment is being rendered (no nested includes).
	 *
	 * @var bool
	 */
	private $rendering = false;

	/**
	 * Sends one header line (header() in production).
	 *
	 * @var callable
	 */
	private $send_header;

	/**
	 * ESI for one request.
	 *
	 * @param Settings $settings    Settings.
	 * @param Tags     $tags        Tags.
	 * @param Request  $request     The request.
	 * @param string   $key         Secret for signing fragment URLs.
	 * @param callable $send_header Sends a header line; defaults to header().
	 */
	public function __construct( Settings $settings, Tags $tags, Request $request, $key, $send_header = null ) {
		$this->settings    = $settings;
		$this->tags        = $tags;
		$this->request     = $request;
		$this->key         = (string) $key;
		$this->send_header = $send_header ? $send_header : 'header';
	}

	/**
	 * Hooks into WordPress when ESI applies to this request.
	 */
	public function register() {
		if ( $this->is_fragment_request() ) {
			add_action( 'template_redirect', array( $this, 'serve_fragment' ), 1 );
			return;
		}
		if ( ! $this->enabled() ) {
			return;
		}
		if ( $this->settings->get( 'esi_admin_bar' ) ) {
			add_action( 'template_redirect', array( $this, 'swap_admin_bar' ), 1 );
		}
		add_filter( 'pre_do_shortcode_tag', array( $this, 'shortcode' ), 10, 3 );
		add_filter( 'widget_display_callback', array( $this, 'widget' ), 10, 3 );
	}

	/**
	 * Whether an ESI processor reads this response.
	 *
	 * @return bool
	 */
	public function enabled() {
		$mode = $this->settings->get( 'esi' );
		if ( 'auto' === $mode ) {
			return $this->request->behind_proxy( $this->settings->get( 'proxy' ) );
		}
		return 'on' === $mode && ! $this->request->is_cli();
	}

	/**
	 * Whether this page emitted an include (Control then adds esi=on).
	 *
	 * @return bool
	 */
	public function used() {
		return $this->used;
	}

	/**
	 * Whether this request asks for a fragment.
	 *
	 * @return bool
	 */
	public function is_fragment_request() {
		// phpcs:ignore WordPress.Security.NonceVerification.Recommended -- fragment URLs are HMAC-signed instead.
		return isset( $_GET[ self::PARAM ] );
	}

	/**
	 * The include markup for a block.
	 *
	 * @param string $block         Block name: admin-bar, shortcode or widget.
	 * @param array  $args          Block arguments, signed into the URL.
	 * @param string $base_url      URL the fragment is requested at.
	 * @param string $cache_control LiteSpeed cache-control attribute.
	 * @return string
	 */
	public function include_markup( $block, array $args, $base_url, $cache_control ) {
		$this->used = true;
		$payload    = self::encode( $args );
		$src        = add_query_arg(
			array(
				self::PARAM          => $block,
				self::PARAM . '_a'   => $payload,
				self::PARAM . '_sig' => $this->sign( $block, $payload ),
			),
			$base_url
		);
		$src        = (string) wp_make_link_relative( $src );
		return sprintf( '<esi:include src="%s" cache-control="%s" />', esc_attr( $src ), esc_attr( $cache_control ) );
	}

	/**
	 * Signature of a block and its encoded arguments.
	 *
	 * @param string $block   Block name.
	 * @param string $payload Encoded arguments.
	 * @return string
	 */
	public function sign( $block, $payload ) {
		return substr( hash_hmac( 'sha256', $block . '|' . $payload, $this->key ), 0, 32 );
	}

	/**
	 * Arguments as URL-safe base64 JSON.
	 *
	 * @param array $args Arguments.
	 * @return string
	 */
	public static function encode( array $args ) {
		// phpcs:ignore WordPress.PHP.DiscouragedPHPFunctions.obfuscation_base64_encode -- transport encoding of signed data.
		return rtrim( strtr( base64_encode( (string) wp_json_encode( $args ) ), '+/', '-_' ), '=' );
	}

	/**
	 * Decodes arguments made by encode(), or null.
	 *
	 * @param string $payload Encoded arguments.
	 * @return array|null
	 */
	public static function decode( $payload ) {
		// phpcs:ignore WordPress.PHP.DiscouragedPHPFunctions.obfuscation_base64_decode -- transport encoding of signed data.
		$json = base64_decode( strtr( (string) $payload, '-_', '+/' ), true );
		$args = is_string( $json ) ? json_decode( $json, true ) : null;
		return is_array( $args ) ? $args : null;
	}

	/**
	 * Renders the admin bar as a private block instead of inline.
	 */
	public function swap_admin_bar() {
		if ( ! is_admin_bar_showing() ) {
			return;
		}
		remove_action( 'wp_body_open', 'wp_admin_bar_render', 0 );
		remove_action( 'wp_footer', 'wp_admin_bar_render', 1000 );
		add_action( 'wp_footer', array( $this, 'print_admin_bar' ), 1000 );
	}

	/**
	 * Prints the admin bar include; the fragment is requested at this page's
	 * own URL, so it shows this page's menu (e.g. "Edit Post").
	 */
	public function print_admin_bar() {
		// phpcs:ignore WordPress.Security.EscapeOutput.OutputNotEscaped -- include_markup() escapes.
		echo $this->include_markup( 'admin-bar', array(), home_url( $this->request->uri() ), 'private,no-vary' );
	}

	/**
	 * pre_do_shortcode_tag: an include instead of a listed shortcode.
	 *
	 * @param false|string $output Short-circuit output.
	 * @param string       $tag    Shortcode tag.
	 * @param array|string $attr   Attributes.
	 * @return false|string
	 */
	public function shortcode( $output, $tag, $attr ) {
		if ( false !== $output || $this->rendering || ! in_array( $tag, (array) $this->settings->get( 'esi_shortcodes' ), true ) ) {
			return $output;
		}
		$args = array(
			'tag'  => $tag,
			'attr' => is_array( $attr ) ? $attr : array(),
		);
		return $this->include_markup( 'shortcode', $args, home_url( '/' ), $this->fragment_control_attr() );
	}

	/**
	 * widget_display_callback: an include instead of a listed widget.
	 *
	 * @param array|false $instance Widget settings.
	 * @param \WP_Widget  $widget   Widget.
	 * @param array       $args     Sidebar arguments.
	 * @return array|false False when the include replaced the widget.
	 */
	public function widget( $instance, $widget, $args ) {
		if ( false === $instance || $this->rendering || ! in_array( $widget->id_base, (array) $this->settings->get( 'esi_widgets' ), true ) ) {
			return $instance;
		}
		$keep = array_intersect_key( (array) $args, array_flip( array( 'before_widget', 'after_widget', 'before_title', 'after_title' ) ) );
		// phpcs:ignore WordPress.Security.EscapeOutput.OutputNotEscaped -- include_markup() escapes.
		echo $this->include_markup(
			'widget',
			array(
				'class'    => get_class( $widget ),
				'instance' => $instance,
				'args'     => $keep,
			),
			home_url( '/' ),
			$this->fragment_control_attr()
		);
		return false;
	}

	/**
	 * Answers a fragment request and ends it (template_redirect).
	 */
	public function serve_fragment() {
		// phpcs:disable WordPress.Security.NonceVerification.Recommended -- the signature replaces a nonce.
		$block   = isset( $_GET[ self::PARAM ] ) ? sanitize_key( wp_unslash( $_GET[ self::PARAM ] ) ) : '';
		$payload = isset( $_GET[ self::PARAM . '_a' ] ) ? sanitize_text_field( wp_unslash( $_GET[ self::PARAM . '_a' ] ) ) : '';
		$sig     = isset( $_GET[ self::PARAM . '_sig' ] ) ? sanitize_text_field( wp_unslash( $_GET[ self::PARAM . '_sig' ] ) ) : '';
		// phpcs:enable
		$args = self::decode( $payload );
		if ( null === $args || ! hash_equals( $this->sign( $block, $payload ), $sig ) ) {
			status_header( 403 );
			call_user_func( $this->send_header, Control::HEADER . ': no-cache', true );
			exit;
		}
		$this->rendering = true;
		$html            = $this->render( $block, $args );
		$logged_in       = is_user_logged_in();
		$ttl             = $this->settings->ttl( 'esi' );
		$control         = 'no-cache';
		if ( $ttl > 0 && 'admin-bar' !== $block ) {
			$control = ( $logged_in ? 'private,no-vary,max-age=' : 'public,max-age=' ) . $ttl;
		} elseif ( $ttl > 0 && $logged_in ) {
			$control = 'private,no-vary,max-age=' . $ttl;
		}
		status_header( 200 );
		call_user_func( $this->send_header, Control::HEADER . ': ' . $control, true );
		call_user_func( $this->send_header, 'X-LiteSpeed-Tag: ' . implode( ',', array( $this->tags->site(), $this->tags->tag( 'esi', $block ) ) ), true );
		// phpcs:ignore WordPress.Security.EscapeOutput.OutputNotEscaped -- rendered by WordPress itself.
		echo $html;
		exit;
	}

	/**
	 * The HTML of a block.
	 *
	 * @param string $block Block name.
	 * @param array  $args  Arguments.
	 * @return string
	 */
	private function render( $block, array $args ) {
		ob_start();
		if ( 'admin-bar' === $block && is_user_logged_in() ) {
			wp_admin_bar_render();
		} elseif ( 'shortcode' === $block && isset( $args['tag'] ) && shortcode_exists( $args['tag'] ) ) {
			$attr = '';
			foreach ( (array) ( isset( $args['attr'] ) ? $args['attr'] : array() ) as $k => $v ) {
				$attr .= is_int( $k ) ? ' "' . esc_attr( $v ) . '"' : ' ' . sanitize_key( $k ) . '="' . esc_attr( $v ) . '"';
			}
			echo do_shortcode( '[' . $args['tag'] . $attr . ']' ); // phpcs:ignore WordPress.Security.EscapeOutput.OutputNotEscaped -- shortcode output.
		} elseif ( 'widget' === $block && isset( $args['class'] ) && class_exists( $args['class'] ) && is_subclass_of( $args['class'], 'WP_Widget' ) ) {
			the_widget( $args['class'], isset( $args['instance'] ) ? $args['instance'] : array(), isset( $args['args'] ) ? $args['args'] : array() );
		}
		return (string) ob_get_clean();
	}

	/**
	 * The cache-control attribute of a shortcode or widget include.
	 *
	 * @return string
	 */
	private function fragment_control_attr() {
		return is_user_logged_in() ? 'private,no-vary' : 'public';
	}
}
